//! Reading an instruction as references to the scene's objects (`text.entities`):
//! each object's state values form an entity with a learned key (its
//! identity: in `manipulation/instruct-v0` a cube's slot is its colour).
//! Every word is scored for naming an object; role `r` (the object moved,
//! the object it goes on) is the (r+1)-th naming word, and that word's
//! query of the keys picks the object's values. The actor and critic then
//! read the picked objects, not every object in its slot, and a context
//! read of the other words (the verb, the side) — so a colour word learned
//! in one template names its cube in every template, which a held-out
//! combination of trained words needs (the slot-per-object MLP learns
//! "pick" only for the cubes it picked in training).
//!
//! A word's embedding and its naming score are the same wherever it stands
//! (a hashed table, as the instruction encoder's); only the count of naming
//! words before it sees the order ("put the red cube on the blue cube": the
//! first colour is moved, the second is the base).
//!
//! A pixel policy has no objects in its state: its objects are the cells of
//! the CNN's last feature map (`text.entities.cells`), each cell's key read
//! from its channels, so a word's pointer picks the cell that shows its cube
//! wherever it lies, and the picked values carry the cell's place.

use crate::base::error::{LearnError, Result};
use crate::nets::encoder::{linear, token_ids, word_table};
use crate::nets::head::standard_normal;
use crate::nets::mlp::orthogonal;
use burn::module::Param;
use burn::nn::{Embedding, Linear};
use burn::prelude::*;
use burn::tensor::activation::{relu, sigmoid, softmax};
use proprio::EnvRng;
use std::ops::Range;

mod objects;
pub use objects::{EntityConfig, Objects};

/// The naming layer: every word starts out naming an object with the same
/// small chance sigmoid(`bias`), so no word is counted before another (a
/// start token always first would otherwise take the first role from the outset).
fn naming(width: usize, bias: f32, device: &Device, rng: &mut EnvRng) -> Linear {
    let mut layer = linear(width, 1, orthogonal(width, 1, 1.0, rng), device);
    layer.bias = Some(Param::from_tensor(Tensor::full([1], bias, device)));
    layer
}

/// A pointer's logits are `POINTER_SCALE` · q·k / √width, about N(0, 2²)
/// at the start: unscaled, a random word began sure of a random object
/// (the synthetic binding test at width 16: 11 seeds of 16 bound, 15 with
/// this scale and the context below).
const POINTER_SCALE: f64 = 2.0;

/// The instruction's tokens and the state's objects → `[B, rest of the
/// state + roles × object width + features]`.
#[derive(Module, Debug)]
pub struct EntityReader {
    /// The hashed table of word embeddings `[buckets, width]`.
    embedding: Embedding,
    /// A word → the logit of its naming an object.
    naming: Linear,
    /// A word → its logit in the context's attention.
    context_logit: Linear,
    /// A role's words → its query of the objects' keys.
    query: Linear,
    /// Each object's key `[count, width]` (image cells: a place's, added to its content's).
    keys: Param<Tensor<2>>,
    /// An image cell's values → its key (absent for state objects, whose keys are fixed).
    cell_keys: Option<Linear>,
    /// The context's words → features.
    context: Linear,
    /// `(offset, length)` of each token part of a flat observation.
    #[module(skip)]
    segments: Vec<(usize, usize)>,
    #[module(skip)]
    buckets: usize,
    #[module(skip)]
    objects: Objects,
    /// The state's runs with the objects' values taken out.
    #[module(skip)]
    rest: Vec<Range<usize>>,
    /// Image cells as the objects: `(values per cell, width of the rest)`.
    #[module(skip)]
    cells: Option<(usize, usize)>,
}

impl EntityReader {
    /// A reader of the token parts at `segments` and of `objects` among the
    /// `state` runs of a flat observation, word embeddings N(0, 1) and
    /// layers orthogonal, drawn from `rng`.
    pub fn new(
        segments: Vec<(usize, usize)>,
        state: &[Range<usize>],
        objects: &Objects,
        sizes: (usize, usize, usize),
        device: &Device,
        rng: &mut EnvRng,
    ) -> Result<Self> {
        objects.validate(state).map_err(LearnError::Config)?;
        let taken = objects.columns();
        let rest = state
            .iter()
            .flat_map(|r| r.clone())
            .filter(|k| !taken.contains(k))
            .fold(Vec::<Range<usize>>::new(), |mut runs, k| {
                match runs.last_mut() {
                    Some(run) if run.end == k => run.end = k + 1,
                    _ => runs.push(k..k + 1),
                }
                runs
            });
        Self::build(segments, objects, rest, None, sizes, device, rng)
    }

    /// A reader whose objects are the `count` cells of an image's feature
    /// map, `values` each ([`Encoder::cells`](crate::nets::encoder::Encoder::cells)),
    /// read beside `rest` other features; a cell's key is a linear map of its
    /// values plus a learned key of its place (zero at the start).
    pub fn over_cells(
        segments: Vec<(usize, usize)>,
        (count, values, rest): (usize, usize, usize),
        (roles, naming_bias): (usize, f32),
        sizes: (usize, usize, usize),
        device: &Device,
        rng: &mut EnvRng,
    ) -> Result<Self> {
        if count == 0 || values == 0 || roles == 0 {
            return Err(LearnError::Config(
                "text.entities over an image needs cells and at least one role".into(),
            ));
        }
        let objects = Objects {
            count,
            fields: Vec::new(),
            roles,
            naming_bias,
        };
        let cells = Some((values, rest));
        Self::build(segments, &objects, Vec::new(), cells, sizes, device, rng)
    }

    /// The layers, drawn from `rng` in the first reader's order (a seed's
    /// state reader is unchanged), a cell reader's key map last.
    fn build(
        segments: Vec<(usize, usize)>,
        objects: &Objects,
        rest: Vec<Range<usize>>,
        cells: Option<(usize, usize)>,
        (buckets, width, features): (usize, usize, usize),
        device: &Device,
        rng: &mut EnvRng,
    ) -> Result<Self> {
        let len: usize = segments.iter().map(|&(_, l)| l).sum();
        if len == 0 {
            return Err(LearnError::Config(
                "text.entities reads an instruction: the observation needs a token part".into(),
            ));
        }
        let embedding = word_table(buckets, width, device, rng);
        let keys: Vec<f32> = match cells {
            Some(_) => vec![0.0; objects.count * width],
            None => (0..objects.count * width)
                .map(|_| standard_normal(rng))
                .collect(),
        };
        Ok(Self {
            embedding,
            naming: naming(width, objects.naming_bias, device, rng),
            context_logit: linear(width, 1, orthogonal(width, 1, 1.0, rng), device),
            query: linear(width, width, orthogonal(width, width, 1.0, rng), device),
            keys: Param::from_tensor(Tensor::from_data(
                TensorData::new(keys, [objects.count, width]),
                device,
            )),
            context: linear(
                width,
                features,
                orthogonal(width, features, 2f64.sqrt(), rng),
                device,
            ),
            cell_keys: cells.map(|(values, _)| {
                linear(values, width, orthogonal(values, width, 1.0, rng), device)
            }),
            segments,
            buckets,
            objects: objects.clone(),
            rest,
            cells,
        })
    }

    /// Values one object has.
    fn object_width(&self) -> usize {
        self.cells
            .map_or_else(|| self.objects.width(), |(values, _)| values)
    }

    /// Width of the features: the rest of the state, the picked objects, the context.
    pub fn out_dim(&self) -> usize {
        let rest = match self.cells {
            Some((_, rest)) => rest,
            None => self.rest.iter().map(ExactSizeIterator::len).sum(),
        };
        rest + self.objects.roles * self.object_width() + self.context.weight.dims()[1]
    }

    /// Reads a batch of flat observations `[B, obs]` (objects from the state).
    pub fn forward(&self, obs: Tensor<2>) -> Tensor<2> {
        let [b, _] = obs.dims();
        let rest = self
            .rest
            .iter()
            .map(|r| obs.clone().slice([0..b, r.clone()]))
            .collect();
        let objects = self.objects(&obs);
        self.pick(&obs, objects, rest)
    }

    /// Reads a batch of flat observations `[B, obs]` whose objects are an
    /// image's `cells` `[B, count, values]`, beside the `rest` of its features.
    pub fn forward_cells(&self, obs: &Tensor<2>, cells: Tensor<3>, rest: Tensor<2>) -> Tensor<2> {
        self.pick(obs, cells, vec![rest])
    }

    /// The rest, each role's picked object, the context's features.
    fn pick(&self, obs: &Tensor<2>, objects: Tensor<3>, mut parts: Vec<Tensor<2>>) -> Tensor<2> {
        let (over_objects, _, context) = self.read(obs, &objects);
        let [b, roles, _] = over_objects.dims();
        let picked = over_objects
            .matmul(objects)
            .reshape([b, roles * self.object_width()]);
        parts.push(picked);
        parts.push(relu(self.context.forward(context)));
        Tensor::cat(parts, 1)
    }

    /// Each role's attention over the objects `[B, roles, count]` and over
    /// the words `[B, L, roles + 1]` (the context's last): what the policy
    /// took the instruction to name; `cells`: an image's, for a reader over
    /// cells (`None`: the objects are read from the state).
    pub fn attention(&self, obs: Tensor<2>, cells: Option<Tensor<3>>) -> (Tensor<3>, Tensor<3>) {
        let objects = cells.unwrap_or_else(|| self.objects(&obs));
        let (over_objects, over_words, _) = self.read(&obs, &objects);
        (over_objects, over_words)
    }

    /// The attention over `objects` `[B, count, values]`, over words, and the context's words `[B, width]`.
    fn read(&self, obs: &Tensor<2>, objects: &Tensor<3>) -> (Tensor<3>, Tensor<3>, Tensor<2>) {
        let [b, _] = obs.dims();
        let ids = token_ids(obs, &self.segments);
        let [_, len] = ids.dims();
        let present = ids.clone().not_equal_elem(0.0).float();
        let words = self
            .embedding
            .forward(ids.int().remainder_scalar(self.buckets as i64));
        let [_, _, width] = words.dims();
        let naming =
            sigmoid(self.naming.forward(words.clone()).reshape([b, len])) * present.clone();
        let roles = self.objects.roles;
        let naming_words = nth_naming_word(naming.clone(), roles);
        // The context: the words by their own logits, each weighed by the
        // chance that it names no object, so that a colour word reaches the
        // features only through the object it picks (renormalised, as the
        // first reader did, a colour word named with chance 0.9 could still
        // take the context: policies learned "pick" per colour through it).
        let context = softmax(
            self.context_logit
                .forward(words.clone())
                .reshape([b, len])
                .mask_fill(present.equal_elem(0.0), -1e9),
            1,
        ) * (-naming + 1.0);
        let over_words = Tensor::cat(vec![naming_words, context.clone().unsqueeze_dim(2)], 2);
        let context = context
            .unsqueeze_dim::<3>(1)
            .matmul(words.clone())
            .reshape([b, width]);
        // Each word's own pointer over the objects; a role follows its word's,
        // and is even over the objects for the chance that it has no word.
        let count = self.objects.count;
        let queries = self.query.forward(words);
        let logits = match &self.cell_keys {
            Some(cell_keys) => {
                let keys = cell_keys.forward(objects.clone()) + self.keys.val().unsqueeze_dim(0);
                queries.matmul(keys.swap_dims(1, 2))
            }
            None => queries
                .reshape([b * len, width])
                .matmul(self.keys.val().transpose())
                .reshape([b, len, count]),
        };
        let pointers = softmax(logits.mul_scalar(POINTER_SCALE / (width as f64).sqrt()), 2);
        let roles_words = over_words.clone().slice([0..b, 0..len, 0..roles]);
        let unnamed = -roles_words.clone().sum_dim(1) + 1.0;
        let over_objects =
            roles_words.swap_dims(1, 2).matmul(pointers) + unnamed.swap_dims(1, 2) / count as f64;
        (over_objects, over_words, context)
    }

    /// The objects' values `[B, count, width]`.
    fn objects(&self, obs: &Tensor<2>) -> Tensor<3> {
        let [b, _] = obs.dims();
        let per_object: Vec<Tensor<2>> = (0..self.objects.count)
            .map(|i| {
                let fields = self
                    .objects
                    .fields
                    .iter()
                    .map(|&[at, w]| obs.clone().slice([0..b, at + i * w..at + (i + 1) * w]))
                    .collect();
                Tensor::cat(fields, 1)
            })
            .collect();
        Tensor::stack(per_object, 1)
    }
}

/// For each word and role `r < roles`, the chance `[B, L, roles]` that the
/// word is the (r+1)-th to name an object, each word naming one with chance
/// `naming` `[B, L]` independently (a Poisson-binomial count, word by word).
fn nth_naming_word(naming: Tensor<2>, roles: usize) -> Tensor<3> {
    let [b, len] = naming.dims();
    let device = naming.device();
    let none = Tensor::zeros([b, 1], &device);
    // The chance that exactly r words before this one name an object, r < roles.
    let mut exactly = Tensor::cat(
        vec![
            Tensor::ones([b, 1], &device),
            Tensor::zeros([b, roles - 1], &device),
        ],
        1,
    );
    let mut chance = Vec::with_capacity(len);
    for j in 0..len {
        let g = naming.clone().slice([0..b, j..j + 1]);
        chance.push(exactly.clone() * g.clone());
        let one_more = Tensor::cat(
            vec![none.clone(), exactly.clone().slice([0..b, 0..roles - 1])],
            1,
        );
        exactly = exactly * (-g.clone() + 1.0) + one_more * g;
    }
    Tensor::stack(chance, 1)
}

#[cfg(test)]
mod tests;
