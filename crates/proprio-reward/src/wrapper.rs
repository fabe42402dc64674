//! `ModelReward`: pays a vision-language model's reward on any env that
//! renders. After each step the whole batch is rendered in one call, embedded
//! in one CLIP pass, and scored by a [`RewardHead`]; the task's own reward
//! stays in each step's info (`task_reward`), and its success key is untouched.

use crate::clip::{ClipModel, Embeddings, TextReading};
use crate::instructions::Instructions;
use crate::{Result, RewardError};
use proprio::render::{FrameClient, FrameSource, Frames};
use proprio::{AutoresetMode, Batch, EnvSpec, Error, Phase, ResetOptions, Scene, State, VecEnv};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

/// Info key: the task's own reward of the step.
pub const TASK_REWARD: &str = "task_reward";
/// Info key: the model's reward of the step (before weighting).
pub const MODEL_REWARD: &str = "model_reward";
/// Info key, on the step an episode ends: the sum of its model rewards.
pub const MODEL_RETURN: &str = "model.return";

/// What a reward head sees of one batched step.
pub struct StepFrames<'a> {
    /// Row `k`: the embedding of the frame env `envs[k]` shows after this
    /// step (the unit mean of its views' when the camera names several).
    pub embeddings: &'a Embeddings,
    /// Every view's embeddings, view after view: row `v · envs.len() + k` is
    /// view `v` of env `envs[k]` (the same rows as `embeddings` for one view).
    pub views: &'a Embeddings,
    /// The envs that moved this step.
    pub envs: &'a [usize],
    /// Whether each of them ended its episode with this step.
    pub done: &'a [bool],
    /// The task's own reward of each of them this step.
    pub task: &'a [f32],
    /// The rendered frames, view by view: each view holds env `envs[k]`'s
    /// `side`×`side` RGB image at row `k` (for labellers that watch).
    pub pixels: &'a [u8],
    /// Side of the square frames, pixels.
    pub side: usize,
    /// For an env whose observations carry an instruction: the embeddings of
    /// every instruction seen so far (of its caption, for a head with
    /// [`RewardHead::instruction_goals`]) and, per env of `envs`, its own's row.
    pub instructions: Option<(&'a Embeddings, &'a [usize])>,
}

impl StepFrames<'_> {
    /// The instructions' embeddings (their captions, for a head with goals)
    /// and each env's row; an error where the envs carry none.
    pub fn captions(&self) -> Result<(&Embeddings, &[usize])> {
        self.instructions.ok_or_else(|| {
            RewardError::Input("goals per instruction need envs that carry instructions".into())
        })
    }
}

/// Which steps' frames a head reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watch {
    /// Every step's: the wrapper renders and embeds every env after every step.
    EveryStep,
    /// Only the frame an episode ends on: the other steps are neither
    /// rendered nor embedded, and the head pays them 0.
    EpisodeEnds,
}

/// Turns a batch of frame embeddings into model rewards.
pub trait RewardHead: Send {
    /// Which frames the head needs; a head that reads only episodes' last
    /// frames spares the wrapper rendering and embedding the rest.
    fn watch(&self) -> Watch {
        Watch::EveryStep
    }

    /// Writes the model reward of each env of `step.envs` into `out` (same order).
    fn rewards(&mut self, step: &StepFrames, out: &mut [f32]) -> Result<()>;

    /// Forgets what the head kept of env `env`'s episode (it was reset or restored).
    fn restart(&mut self, env: usize);

    /// Writes what the head has learned into the checkpoint folder `dir`
    /// (nothing, for heads that learn nothing).
    fn save(&self, _dir: &Path) -> Result<()> {
        Ok(())
    }

    /// Reads what [`RewardHead::save`] wrote into `dir`. A `frozen` head
    /// (evaluation) only pays what it learned and learns no more.
    fn load(&mut self, _dir: &Path, _frozen: bool) -> Result<()> {
        Ok(())
    }

    /// How the head reads the instructions envs' observations carry
    /// ([`StepFrames::instructions`]) through the wrapper's CLIP.
    fn text_reading(&self) -> TextReading {
        TextReading::Sentence
    }

    /// For a head that scores each env against a caption of its own
    /// episode's instruction: each instruction with its caption, which the
    /// wrapper embeds in the instruction's place.
    fn instruction_goals(&self) -> Option<&BTreeMap<String, String>> {
        None
    }
}

/// A reward head shared between its [`ModelReward`] and the learner, which
/// saves what the head learned with each checkpoint.
/// It also carries the wrapper's running [`RewardCost`], for the learner's logs.
#[derive(Clone)]
pub struct SharedHead {
    head: Arc<Mutex<Box<dyn RewardHead>>>,
    cost: Arc<Mutex<RewardCost>>,
}

impl SharedHead {
    fn new(head: Box<dyn RewardHead>) -> Self {
        Self {
            head: Arc::new(Mutex::new(head)),
            cost: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Box<dyn RewardHead>> {
        self.head.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Time spent on the model's reward so far.
    pub fn cost(&self) -> RewardCost {
        *self.cost.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// See [`RewardHead::save`].
    pub fn save(&self, dir: &Path) -> Result<()> {
        self.lock().save(dir)
    }

    /// See [`RewardHead::load`].
    pub fn load(&self, dir: &Path, frozen: bool) -> Result<()> {
        self.lock().load(dir, frozen)
    }
}

/// Time spent on the model's reward since the wrapper was made.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RewardCost {
    /// Batches scored.
    pub batches: u64,
    /// Frames rendered and embedded.
    pub frames: u64,
    /// Seconds spent drawing scenes and rendering them.
    pub render_seconds: f64,
    /// Seconds spent in the model (preprocessing included) and the head.
    pub embed_seconds: f64,
}

/// Mixes what a reward model pays with the task's reward:
/// `reward = weight · (model + offset) + task_weight · task`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mix {
    /// Added to the model's reward before weighting.
    pub offset: f32,
    /// Weight of the model's reward.
    pub weight: f32,
    /// Weight of the task's reward.
    pub task_weight: f32,
}

/// A vector env whose reward is (partly) a vision-language model's.
///
/// It scores every step's frames, an episode's last one included, so it runs
/// in its inner env's next-step or disabled autoreset; same-step autoreset is
/// `SameStepAutoreset` wrapped outside it. Its frames come from the stack's
/// [`FrameSource`], shared with pixel observations.
pub struct ModelReward<V> {
    inner: V,
    clip: ClipModel,
    head: SharedHead,
    mix: Mix,
    frames: FrameClient,
    camera: String,
    pictures: Frames,
    pixels: Vec<u8>,
    instructions: Option<Instructions>,
    resetting: Vec<bool>,
    stepped: Vec<usize>,
    done: Vec<bool>,
    scores: Vec<f32>,
    /// The head's [`RewardHead::watch`], read once: a head's needs do not change.
    watch: Watch,
    watched: Vec<usize>,
    watched_done: Vec<bool>,
    watched_scores: Vec<f32>,
    task: Vec<f32>,
    model_return: Vec<f64>,
}

impl<V: VecEnv> ModelReward<V> {
    /// The head, shared: the learner saves what it learned with each checkpoint.
    pub fn head(&self) -> SharedHead {
        self.head.clone()
    }

    /// Wraps `inner` (next-step or disabled autoreset; for same-step, wrap
    /// `SameStepAutoreset` outside), looking through `camera` at the model's
    /// input size, with images from `source` (shared with pixel observations).
    pub fn new(
        inner: V,
        clip: ClipModel,
        head: Box<dyn RewardHead>,
        mix: Mix,
        camera: &str,
        source: &FrameSource,
    ) -> Result<Self> {
        if inner.autoreset_mode() == AutoresetMode::SameStep {
            return Err(RewardError::Input(
                "a model reward must see the last frame before a reset: build the inner env with autoreset disabled and wrap SameStepAutoreset outside".into(),
            ));
        }
        let n = inner.num_envs();
        let watch = head.watch();
        let space = &inner.spec().observation_space;
        let goals = head.instruction_goals();
        let instructions = Instructions::new(space, head.text_reading(), goals);
        if goals.is_some() && instructions.is_none() {
            return Err(RewardError::Input(format!(
                "goals give a caption per instruction, but {}'s observations carry no instruction: give one goal",
                inner.spec().id
            )));
        }
        let side = clip.config().vision_config.image_size as u32;
        let frames = source
            .attach(side)
            .map_err(|e| RewardError::Backend(e.to_string()))?;
        Ok(Self {
            inner,
            clip,
            head: SharedHead::new(head),
            mix,
            frames,
            camera: camera.into(),
            pictures: Frames::default(),
            pixels: Vec::new(),
            instructions,
            resetting: vec![false; n],
            stepped: Vec::with_capacity(n),
            done: Vec::with_capacity(n),
            scores: Vec::with_capacity(n),
            watch,
            watched: Vec::with_capacity(n),
            watched_done: Vec::with_capacity(n),
            watched_scores: Vec::with_capacity(n),
            task: Vec::with_capacity(n),
            model_return: vec![0.0; n],
        })
    }

    /// Time spent rendering and embedding so far.
    pub fn cost(&self) -> RewardCost {
        self.head.cost()
    }

    /// The CLIP model scoring the frames.
    pub fn model(&self) -> &ClipModel {
        &self.clip
    }

    /// Renders the stepped envs the head watches, embeds them, and pays each
    /// the head's reward (0 from the model for those it does not watch).
    fn score(&mut self) -> proprio::Result<()> {
        let watch = self.watch;
        self.watched.clear();
        self.watched_done.clear();
        for (&i, &done) in self.stepped.iter().zip(&self.done) {
            if done || watch == Watch::EveryStep {
                self.watched.push(i);
                self.watched_done.push(done);
            }
        }
        self.scores.clear();
        self.scores.resize(self.stepped.len(), 0.0);
        if !self.watched.is_empty() {
            self.score_watched()?;
        }
        self.pay()
    }

    /// Renders and embeds the watched envs and asks the head for their rewards.
    fn score_watched(&mut self) -> proprio::Result<()> {
        let envs = &self.watched;
        let start = Instant::now();
        let count = envs.len();
        let side = self.clip.config().vision_config.image_size as u32;
        let (n, inner) = (self.inner.num_envs(), &self.inner);
        self.pixels.clear();
        for camera in self.camera.split(',').map(str::trim) {
            self.frames.frames(
                n,
                envs,
                camera,
                side,
                false,
                &|envs, scenes| inner.scenes(envs, scenes),
                &mut self.pictures,
            )?;
            self.pixels.extend_from_slice(&self.pictures.rgb);
        }
        let render_s = start.elapsed().as_secs_f64();
        // Every view of every env in one CLIP pass.
        let side = side as usize;
        let views = self.pixels.len() / (count * side * side * 3);
        let all = self
            .clip
            .embed_frames(&self.pixels, count * views, side, side, 3)
            .map_err(|e| Error::Backend(e.to_string()))?;
        let mean;
        let embeddings = if views > 1 {
            mean = mean_of_views(&all, count);
            &mean
        } else {
            &all
        };
        if let Some(instructions) = self.instructions.as_mut() {
            let batch = self.inner.batch();
            instructions
                .read(&self.clip, &batch.obs, batch.obs_dim, envs)
                .map_err(|e| Error::Backend(e.to_string()))?;
        }
        self.task.clear();
        let batch = self.inner.batch();
        self.task.extend(envs.iter().map(|&i| batch.reward[i]));
        self.watched_scores.clear();
        self.watched_scores.resize(count, 0.0);
        let step = StepFrames {
            embeddings,
            views: &all,
            envs,
            done: &self.watched_done,
            task: &self.task,
            pixels: &self.pixels,
            side,
            instructions: self.instructions.as_ref().map(Instructions::last),
        };
        self.head
            .lock()
            .rewards(&step, &mut self.watched_scores)
            .map_err(|e| Error::Backend(e.to_string()))?;
        let mut cost = self
            .head
            .cost
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        cost.batches += 1;
        cost.frames += (count * views) as u64;
        cost.render_seconds += render_s;
        cost.embed_seconds += (Instant::now() - start).as_secs_f64() - render_s;
        drop(cost);
        let mut watched = envs.iter().zip(&self.watched_scores).peekable();
        for (&i, score) in self.stepped.iter().zip(&mut self.scores) {
            if let Some((_, &s)) = watched.next_if(|&(&w, _)| w == i) {
                *score = s;
            }
        }
        Ok(())
    }

    /// Mixes each stepped env's model reward into its reward and info.
    fn pay(&mut self) -> proprio::Result<()> {
        let batch = self.inner.batch_mut();
        for (k, &i) in self.stepped.iter().enumerate() {
            let (model, task) = (self.scores[k], batch.reward[i]);
            if !model.is_finite() {
                return Err(Error::Backend(format!(
                    "the reward model gave env {i} a non-finite reward"
                )));
            }
            batch.reward[i] =
                self.mix.weight * (model + self.mix.offset) + self.mix.task_weight * task;
            let info = &mut batch.infos[i];
            info.set(TASK_REWARD, f64::from(task));
            info.set(MODEL_REWARD, f64::from(model));
            self.model_return[i] += f64::from(model);
            if self.done[k] {
                info.set(MODEL_RETURN, self.model_return[i]);
                self.model_return[i] = 0.0;
                self.head.lock().restart(i);
            }
        }
        Ok(())
    }

    /// A new episode for the envs `which` picks: its model return and the head's memory of it start over.
    fn restart(&mut self, which: impl Fn(usize) -> bool) {
        for i in (0..self.model_return.len()).filter(|&i| which(i)) {
            self.model_return[i] = 0.0;
            self.resetting[i] = false;
            self.head.lock().restart(i);
        }
    }
}

/// One embedding per env from `count` envs' views (view after view): the unit mean of its views'.
fn mean_of_views(all: &Embeddings, count: usize) -> Embeddings {
    let dim = all.dim;
    let mut values = all.values[..count * dim].to_vec();
    for view in all.values[count * dim..].chunks_exact(count * dim) {
        values.iter_mut().zip(view).for_each(|(a, b)| *a += b);
    }
    for row in values.chunks_exact_mut(dim) {
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        row.iter_mut().for_each(|x| *x /= norm);
    }
    Embeddings { dim, values }
}

/// Rewrites the inner batch's rewards and infos in place.
impl<V: VecEnv> VecEnv for ModelReward<V> {
    fn spec(&self) -> &EnvSpec {
        self.inner.spec()
    }

    fn num_envs(&self) -> usize {
        self.inner.num_envs()
    }

    fn autoreset_mode(&self) -> AutoresetMode {
        self.inner.autoreset_mode()
    }

    fn reset(&mut self, seed: Option<u64>, options: ResetOptions) -> proprio::Result<()> {
        self.inner.reset(seed, options)?;
        self.frames.moved(0..self.inner.num_envs());
        self.restart(|_| true);
        Ok(())
    }

    fn reset_envs(&mut self, mask: &[bool], options: ResetOptions) -> proprio::Result<()> {
        self.inner.reset_envs(mask, options)?;
        self.frames.moved((0..mask.len()).filter(|&i| mask[i]));
        self.restart(|i| mask[i]);
        Ok(())
    }

    fn step(&mut self, actions: &[f32]) -> proprio::Result<()> {
        self.inner.step(actions)?;
        self.frames.moved(0..self.inner.num_envs());
        let next_step = self.inner.autoreset_mode() == AutoresetMode::NextStep;
        self.stepped.clear();
        self.done.clear();
        let batch = self.inner.batch();
        for i in 0..self.resetting.len() {
            if std::mem::take(&mut self.resetting[i]) {
                // Next-step mode: this step only started env i's next episode.
                continue;
            }
            let done = batch.done(i);
            self.stepped.push(i);
            self.done.push(done);
            self.resetting[i] = done && next_step;
        }
        self.score()
    }

    fn batch(&self) -> &Batch {
        self.inner.batch()
    }

    fn batch_mut(&mut self) -> &mut Batch {
        self.inner.batch_mut()
    }

    fn snapshot(&self, env: usize) -> proprio::Result<State> {
        self.inner.snapshot(env)
    }

    fn restore(&mut self, state: &State, envs: &[usize]) -> proprio::Result<()> {
        self.inner.restore(state, envs)?;
        self.frames.moved(envs.iter().copied());
        self.restart(|i| envs.contains(&i));
        // Next-step mode: a snapshot taken after its episode ended resets on the next step.
        let ended = state.phase != Phase::Running;
        let next_step = self.inner.autoreset_mode() == AutoresetMode::NextStep;
        for &i in envs {
            self.resetting[i] = ended && next_step;
        }
        Ok(())
    }

    fn scene(&self, env: usize, scene: &mut Scene) -> proprio::Result<()> {
        self.inner.scene(env, scene)
    }

    fn scenes(&self, envs: &[usize], scenes: &mut [Scene]) -> proprio::Result<()> {
        self.inner.scenes(envs, scenes)
    }
}
