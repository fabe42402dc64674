//! The PPO actor-critic: separate actor and critic MLPs, plus a state-independent
//! log-std for boxes; for image observations, a CNN encoder shared by both.

use crate::base::error::{LearnError, Result};
use crate::base::tensor::matrix;
use crate::nets::encoder::{CnnConfig, Encoder, ObsLayout, linear};
use crate::nets::entities::{EntityConfig, EntityReader};
use crate::nets::head::{ActionHead, BinSpacing, GreedyToken};
use crate::nets::instruction::{InstructionEncoder, TextConfig};
use crate::nets::mlp::{Activation, Mlp, orthogonal};
use crate::nets::standardize::Standardize;
use burn::module::Param;
use burn::nn::Linear;
use burn::prelude::*;
use proprio::{EnvRng, Space};

/// What the networks look like: the architecture keys of [`super::PpoConfig`].
/// Keys a description leaves out take their defaults (a group learner's
/// `policy.json` from before it took more than `hidden` and `action_bins`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct AgentShape {
    /// Hidden layer sizes of the actor and critic MLPs.
    pub hidden: Vec<usize>,
    /// The CNN image observations go through first.
    pub cnn: CnnConfig,
    /// The encoder of an instruction's tokens (absent in checkpoints written before it existed).
    #[serde(default)]
    pub text: TextConfig,
    /// Half-open ranges of flat observation components only the critic reads.
    pub critic_only: Vec<[usize; 2]>,
    /// Give the actor's features a head that predicts the critic-only values.
    pub aux: bool,
    /// Squash a Gaussian's mean into the action box with tanh.
    pub squash_mean: bool,
    /// Initial log standard deviation of a Gaussian head.
    pub log_std_init: f32,
    /// Box actions as this many bins per component (one token each, RT-2's
    /// action tokens); 0: a Gaussian.
    #[serde(default)]
    pub action_bins: usize,
    /// Where those bins lie between the action bounds.
    pub action_bin_spacing: BinSpacing,
    /// What the deterministic policy acts with those bins: a token's mode or its mean value.
    pub action_bin_greedy: GreedyToken,
    /// Standardise the state values with fixed statistics carried in the
    /// weights (set by behaviour cloning from its demonstrations; the
    /// identity in a network built from scratch).
    pub standardize_state: bool,
}

impl AgentShape {
    /// The action head for `space` these keys describe (binned or not).
    pub fn action_head(&self, space: &Space) -> Result<ActionHead> {
        ActionHead::for_space_binned(
            space,
            self.action_bins,
            self.action_bin_spacing,
            self.action_bin_greedy,
        )
    }
}

/// Actor (distribution parameters) and critic (state value) networks.
#[derive(Module, Debug)]
pub struct ActorCritic {
    /// The state values' fixed standardisation, ahead of everything else.
    pub standardize: Option<Standardize>,
    /// Image observations → features, shared by actor and critic (CleanRL's
    /// Atari trunk); for a reader over the image's cells, → its cells.
    pub encoder: Option<Encoder>,
    /// An instruction's tokens → features, shared by actor and critic.
    pub instruction: Option<InstructionEncoder>,
    /// An instruction and the state's objects → the state with the named
    /// objects picked out (`text.entities`; then no instruction encoder).
    pub entities: Option<EntityReader>,
    /// Observation (or its features) → distribution parameters (means or logits).
    pub actor: Mlp,
    /// Observation (or its features) → state value.
    pub critic: Mlp,
    /// Log standard deviation `[1, A]` of a Gaussian head.
    pub log_std: Option<Param<Tensor<2>>>,
    /// The actor's features → the critic-only values (auxiliary prediction).
    pub aux: Option<Linear>,
    /// 1 where the actor reads a component of the (encoded) observation, 0
    /// where only the critic does (asymmetric actor-critic); empty: it reads all.
    #[module(skip)]
    actor_mask: Vec<f32>,
    /// The critic-only ranges, which the auxiliary head predicts.
    #[module(skip)]
    critic_only: Vec<[usize; 2]>,
    /// Where the state sits (read directly when there is tokens but no image).
    #[module(skip)]
    layout: ObsLayout,
    /// Centre and half-width of the action box a squashed mean lives in; empty: not squashed.
    #[module(skip)]
    mean_box: (Vec<f32>, Vec<f32>),
}

impl ActorCritic {
    /// CleanRL's `Agent`: tanh MLPs, actor output gain 0.01, critic output gain 1,
    /// log-std 0; behind a CNN when `obs_space` holds images; the actor blind
    /// to `shape.critic_only` (Pinto et al. 2017: a critic with privileged state).
    pub fn new(
        obs_space: &Space,
        head: &ActionHead,
        shape: &AgentShape,
        device: &Device,
        rng: &mut EnvRng,
    ) -> Result<Self> {
        let layout = ObsLayout::new(obs_space)?;
        let cells = shape.text.entities.as_ref().is_some_and(|e| e.cells);
        let encoder = if layout.has_images() {
            let encoder = Encoder::new(layout.clone(), &shape.cnn, device, rng)?;
            Some(if cells { encoder.cells_only() } else { encoder })
        } else {
            None
        };
        let entities = match &shape.text.entities {
            Some(objects) => Some(entity_reader(
                obs_space,
                &layout,
                encoder.as_ref(),
                objects,
                shape,
                device,
                rng,
            )?),
            None => None,
        };
        let instruction = if layout.tokens().is_empty() || entities.is_some() {
            None
        } else {
            Some(InstructionEncoder::new(
                layout.tokens().to_vec(),
                layout.vocabularies(),
                &shape.text,
                device,
                rng,
            )?)
        };
        let in_dim = match &entities {
            Some(reader) => reader.out_dim(),
            None => layout.feature_dim(
                obs_space.flat_dim(),
                shape.cnn.features,
                shape.text.features,
            ),
        };
        // A reader over the image's cells reads the state first, not the CNN's features.
        let image_features = if cells { 0 } else { shape.cnn.features };
        let actor_mask = actor_mask(
            &layout,
            obs_space.flat_dim(),
            (image_features, in_dim),
            &shape.critic_only,
        )?;
        let hidden = &shape.hidden;
        let hidden_values: usize = shape.critic_only.iter().map(|[a, b]| b - a).sum();
        if shape.aux && hidden_values == 0 {
            return Err(LearnError::Config(
                "the auxiliary prediction (aux_coef > 0) needs critic_only values to predict"
                    .into(),
            ));
        }
        let mean_box = match head {
            ActionHead::Gaussian { low, high, .. } if shape.squash_mean => {
                if low.iter().chain(high).any(|v| !v.is_finite()) {
                    return Err(LearnError::Config(
                        "squash_mean needs finite action bounds to squash into".into(),
                    ));
                }
                let centre = low.iter().zip(high).map(|(l, h)| 0.5 * (l + h)).collect();
                let half = low.iter().zip(high).map(|(l, h)| 0.5 * (h - l)).collect();
                (centre, half)
            }
            ActionHead::Categorical { .. } | ActionHead::Binned { .. } if shape.squash_mean => {
                return Err(LearnError::Config(
                    "squash_mean is for box actions; this env's actions are discrete".into(),
                ));
            }
            _ => (Vec::new(), Vec::new()),
        };
        let sizes = |out: usize| [&[in_dim], hidden.as_slice(), &[out]].concat();
        Ok(Self {
            standardize: shape
                .standardize_state
                .then(|| Standardize::identity(obs_space.flat_dim(), device)),
            encoder,
            instruction,
            entities,
            actor: Mlp::new(
                &sizes(head.param_dim()),
                Activation::Tanh,
                0.01,
                device,
                rng,
            ),
            critic: Mlp::new(&sizes(1), Activation::Tanh, 1.0, device, rng),
            log_std: match head {
                ActionHead::Gaussian { dim, .. } => Some(Param::from_tensor(Tensor::full(
                    [1, *dim],
                    shape.log_std_init,
                    device,
                ))),
                ActionHead::Categorical { .. } | ActionHead::Binned { .. } => None,
            },
            // Drawn from the run's generator, as every other weight (orthogonal, gain 1).
            aux: shape.aux.then(|| {
                let weight = orthogonal(in_dim, hidden_values, 1.0, rng);
                linear(in_dim, hidden_values, weight, device)
            }),
            actor_mask,
            critic_only: shape.critic_only.clone(),
            layout,
            mean_box,
        })
    }

    /// What the actor and critic read: the observation, or its encoding
    /// (image features and the state, then the instruction's features).
    pub fn features(&self, obs: Tensor<2>) -> Tensor<2> {
        let obs = match &self.standardize {
            Some(standardize) => standardize.forward(obs),
            None => obs,
        };
        if let Some(reader) = &self.entities {
            return match &self.encoder {
                Some(encoder) => {
                    let cells = encoder.cells(&obs);
                    let state = Tensor::cat(self.layout.state(&obs), 1);
                    reader.forward_cells(&obs, cells, state)
                }
                None => reader.forward(obs),
            };
        }
        let Some(instruction) = &self.instruction else {
            return match &self.encoder {
                Some(encoder) => encoder.forward(obs),
                None => obs,
            };
        };
        let mut parts = match &self.encoder {
            Some(encoder) => vec![encoder.forward(obs.clone())],
            None => self.layout.state(&obs),
        };
        parts.push(instruction.forward(obs));
        Tensor::cat(parts, 1)
    }

    /// Distribution parameters `[B, P]` and state values `[B]`, encoding the observations once.
    pub fn forward(&self, obs: Tensor<2>) -> (Tensor<2>, Tensor<1>) {
        let x = self.features(obs);
        (
            self.act(self.blind(x.clone())),
            self.critic.forward(x).squeeze_dim(1),
        )
    }

    /// [`Self::forward`] with the features and the distribution held
    /// fixed: a loss on its values moves the critic only, never the actor.
    pub fn forward_critic_only(&self, obs: Tensor<2>) -> (Tensor<2>, Tensor<1>) {
        // What stays fixed is computed by a copy whose weights take no
        // gradient, so no graph is built for it: a graph built and then
        // detached stayed in the autodiff graph, 3 GB an iteration for a
        // pixel network, until the machine ran out of memory.
        let fixed = self.clone().no_grad();
        let x = fixed.features(obs);
        (
            fixed.act(fixed.blind(x.clone())),
            self.critic.forward(x).squeeze_dim(1),
        )
    }

    /// [`Self::forward`] plus, with an auxiliary head, the mean squared error
    /// of its prediction of the critic-only values from the actor's features.
    pub fn forward_with_aux(&self, obs: Tensor<2>) -> (Tensor<2>, Tensor<1>, Option<Tensor<1>>) {
        let Some(aux) = &self.aux else {
            let (params, value) = self.forward(obs);
            return (params, value, None);
        };
        let targets = Tensor::cat(
            self.critic_only
                .iter()
                .map(|&[start, end]| obs.clone().slice(s![.., start..end]))
                .collect(),
            1,
        );
        let x = self.features(obs);
        let seen = self.blind(x.clone());
        let error = (aux.forward(seen.clone()) - targets).square().mean();
        (
            self.act(seen),
            self.critic.forward(x).squeeze_dim(1),
            Some(error),
        )
    }

    /// Distribution parameters `[B, P]`.
    pub fn params(&self, obs: Tensor<2>) -> Tensor<2> {
        self.act(self.blind(self.features(obs)))
    }

    /// The actor's distribution parameters from the features it sees (a squashed mean lies in the box).
    fn act(&self, seen: Tensor<2>) -> Tensor<2> {
        let params = self.actor.forward(seen);
        let (centre, half) = &self.mean_box;
        if half.is_empty() {
            return params;
        }
        let device = params.device();
        let row = |v: &Vec<f32>| matrix(v, 1, v.len(), &device);
        params.tanh() * row(half) + row(centre)
    }

    /// The features with the critic-only components zeroed.
    fn blind(&self, x: Tensor<2>) -> Tensor<2> {
        if self.actor_mask.is_empty() {
            return x;
        }
        let n = self.actor_mask.len();
        let mask =
            Tensor::<1>::from_data(TensorData::new(self.actor_mask.clone(), [n]), &x.device());
        x * mask.unsqueeze()
    }

    /// State values `[B]`.
    pub fn value(&self, obs: Tensor<2>) -> Tensor<1> {
        self.critic.forward(self.features(obs)).squeeze_dim(1)
    }

    /// The log-std `[1, A]`, if any.
    pub fn log_std(&self) -> Option<Tensor<2>> {
        self.log_std.as_ref().map(Param::val)
    }

    /// The same agent with its log-std held at or below `cap` (a projection
    /// after the optimiser step; Adam's state for it is kept).
    pub fn cap_log_std(mut self, cap: f32) -> Self {
        self.log_std = self
            .log_std
            .map(|p| p.map(|t| t.clamp_max(cap).detach().require_grad()));
        self
    }
}

/// The reader of `objects` and the instruction of an observation `space`
/// laid out as `layout`: the state's objects, or the cells of `encoder`'s
/// last feature map (`cells`, a pixel policy).
fn entity_reader(
    space: &Space,
    layout: &ObsLayout,
    encoder: Option<&Encoder>,
    objects: &EntityConfig,
    shape: &AgentShape,
    device: &Device,
    rng: &mut EnvRng,
) -> Result<EntityReader> {
    let text = &shape.text;
    let sizes = (text.buckets, text.width, text.features);
    let resolved = objects.resolve(space).map_err(LearnError::Config)?;
    if objects.cells {
        let encoder = encoder.ok_or_else(|| {
            LearnError::Config(
                "text.entities.cells reads an image's cells: the observation has none (--obs rgb+state)".into(),
            )
        })?;
        let (count, values) = encoder.cell_shape();
        return EntityReader::over_cells(
            layout.tokens().to_vec(),
            (count, values, layout.state_dim()),
            (resolved.roles, resolved.naming_bias),
            sizes,
            device,
            rng,
        );
    }
    if layout.has_images() || !shape.critic_only.is_empty() {
        return Err(LearnError::Config(
            "text.entities reads objects from state values: a pixel policy (images, critic_only) reads the image's cells (text.entities.cells)".into(),
        ));
    }
    EntityReader::new(
        layout.tokens().to_vec(),
        layout.state_runs(),
        &resolved,
        sizes,
        device,
        rng,
    )
}

/// The actor's mask over the `in_dim` features of an observation laid out
/// as `layout` (`obs_dim` values; the state after `image_features` CNN
/// features), hiding `critic_only`; empty when nothing is hidden.
fn actor_mask(
    layout: &ObsLayout,
    obs_dim: usize,
    (image_features, in_dim): (usize, usize),
    critic_only: &[[usize; 2]],
) -> Result<Vec<f32>> {
    if critic_only.is_empty() {
        return Ok(Vec::new());
    }
    let mut mask = vec![1.0; in_dim];
    for &[start, end] in critic_only {
        if start >= end || end > obs_dim {
            return Err(LearnError::Config(format!(
                "critic_only range [{start}, {end}) is empty or outside the {obs_dim} observation values"
            )));
        }
        for k in start..end {
            let at = layout.feature_index(k, image_features).ok_or_else(|| {
                LearnError::Config(format!(
                    "critic_only: component {k} is an image pixel or a token id; only state values can be hidden from the actor"
                ))
            })?;
            mask[at] = 0.0;
        }
    }
    Ok(mask)
}

#[cfg(test)]
mod tests;
