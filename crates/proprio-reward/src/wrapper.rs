//! `ModelReward`: pays a vision-language model's reward on any env that
//! renders. After each step the whole batch is rendered in one call, embedded
//! in one CLIP pass, and scored by a [`RewardHead`]; the task's own reward
//! stays in each step's info (`task_reward`), and its success key is untouched.

use crate::clip::{ClipModel, Embeddings};
use crate::{Result, RewardError};
use proprio::render::{Frames, RenderConfig, Renderer, inner_autoreset};
use proprio::{AutoresetMode, Batch, EnvSpec, Error, Phase, ResetOptions, Scene, State, VecEnv};
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
    /// Row `k`: the embedding of the frame env `envs[k]` shows after this step.
    pub embeddings: &'a Embeddings,
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
}

/// Turns a batch of frame embeddings into model rewards.
pub trait RewardHead: Send {
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
/// Same-step autoreset needs the frame of the last state before the reset, so
/// for it the inner env runs with autoreset disabled and this wrapper resets
/// finished envs itself, after scoring them (as `PixelObs` does).
pub struct ModelReward<V> {
    inner: V,
    autoreset: AutoresetMode,
    batch: Batch,
    clip: ClipModel,
    head: SharedHead,
    mix: Mix,
    renderer: Renderer,
    camera: String,
    scenes: Vec<Scene>,
    frames: Frames,
    /// The frames of every camera, one after the other.
    pixels: Vec<u8>,
    /// Envs whose previous step ended an episode (next-step mode: this step only resets them).
    resetting: Vec<bool>,
    stepped: Vec<usize>,
    done: Vec<bool>,
    scores: Vec<f32>,
    task: Vec<f32>,
    model_return: Vec<f64>,
    finished: Vec<bool>,
}

impl<V: VecEnv> ModelReward<V> {
    /// Wraps `inner` (which must run with [`inner_autoreset`] of `autoreset`),
    /// looking through `camera` at the model's input size.
    /// The head, shared: the learner saves what it learned with each checkpoint.
    pub fn head(&self) -> SharedHead {
        self.head.clone()
    }

    pub fn new(
        inner: V,
        clip: ClipModel,
        head: Box<dyn RewardHead>,
        mix: Mix,
        camera: &str,
        autoreset: AutoresetMode,
    ) -> Result<Self> {
        let expected = inner_autoreset(autoreset);
        if inner.autoreset_mode() != expected {
            return Err(RewardError::Input(format!(
                "a model reward with {autoreset} autoreset needs an inner env with {expected} autoreset, not {}",
                inner.autoreset_mode()
            )));
        }
        let side = clip.config().vision_config.image_size as u32;
        let renderer = Renderer::new(RenderConfig {
            width: side,
            height: side,
            floor: true,
        })
        .map_err(|e| RewardError::Backend(e.to_string()))?;
        let n = inner.num_envs();
        let batch =
            Batch::new(n, inner.batch().obs_dim).map_err(|e| RewardError::Input(e.to_string()))?;
        Ok(Self {
            inner,
            autoreset,
            batch,
            clip,
            head: SharedHead::new(head),
            mix,
            renderer,
            camera: camera.into(),
            scenes: vec![Scene::default(); n],
            frames: Frames::default(),
            pixels: Vec::new(),
            resetting: vec![false; n],
            stepped: Vec::with_capacity(n),
            done: Vec::with_capacity(n),
            scores: Vec::with_capacity(n),
            task: Vec::with_capacity(n),
            model_return: vec![0.0; n],
            finished: vec![false; n],
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

    /// Renders and embeds the envs in `self.stepped`, and writes their mixed rewards.
    fn score(&mut self) -> proprio::Result<()> {
        let envs = &self.stepped;
        if envs.is_empty() {
            return Ok(());
        }
        let start = Instant::now();
        for &i in envs {
            self.inner.scene(i, &mut self.scenes[i])?;
        }
        let count = envs.len();
        self.pixels.clear();
        for camera in self.camera.split(',').map(str::trim) {
            self.renderer.render_envs(
                &self.scenes,
                envs.iter().copied(),
                camera,
                false,
                &mut self.frames,
            )?;
            self.pixels.extend_from_slice(&self.frames.rgb);
        }
        let render_s = start.elapsed().as_secs_f64();
        // Every view of every env in one CLIP pass.
        let side = self.frames.width as usize;
        let views = self.pixels.len() / (count * side * side * 3);
        let mut embeddings = self
            .clip
            .embed_frames(&self.pixels, count * views, side, side, 3)
            .map_err(|e| Error::Backend(e.to_string()))?;
        if views > 1 {
            // One embedding per env: the unit mean of its views'.
            let dim = embeddings.dim;
            let (first, rest) = embeddings.values.split_at_mut(count * dim);
            for view in rest.chunks_exact(count * dim) {
                first.iter_mut().zip(view).for_each(|(a, b)| *a += b);
            }
            for row in first.chunks_exact_mut(dim) {
                let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
                row.iter_mut().for_each(|x| *x /= norm);
            }
            embeddings.values.truncate(count * dim);
        }
        self.scores.resize(count, 0.0);
        self.task.clear();
        self.task.extend(envs.iter().map(|&i| self.batch.reward[i]));
        let step = StepFrames {
            embeddings: &embeddings,
            envs,
            done: &self.done,
            task: &self.task,
            pixels: &self.pixels,
            side,
        };
        self.head
            .lock()
            .rewards(&step, &mut self.scores)
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
        for (k, &i) in envs.iter().enumerate() {
            let (model, task) = (self.scores[k], self.batch.reward[i]);
            if !model.is_finite() {
                return Err(Error::Backend(format!(
                    "the reward model gave env {i} a non-finite reward"
                )));
            }
            self.batch.reward[i] =
                self.mix.weight * (model + self.mix.offset) + self.mix.task_weight * task;
            let info = &mut self.batch.infos[i];
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

    /// Same-step autoreset: keeps each finished env's last observation and
    /// info, then resets it (its reward and flags stay those of the last step).
    fn reset_finished(&mut self) -> proprio::Result<()> {
        let mut any = false;
        for i in 0..self.finished.len() {
            self.finished[i] = self.batch.done(i);
            if self.finished[i] {
                any = true;
                self.batch.keep_final(i);
            }
        }
        if !any {
            return Ok(());
        }
        self.inner.reset_envs(&self.finished, None)?;
        for i in 0..self.finished.len() {
            if self.finished[i] {
                self.copy_obs(i);
                self.batch.infos[i].clone_from(&self.inner.batch().infos[i]);
            }
        }
        Ok(())
    }

    /// Copies env `i`'s observation row from the inner batch.
    fn copy_obs(&mut self, i: usize) {
        let d = self.batch.obs_dim;
        self.batch.obs[i * d..(i + 1) * d].copy_from_slice(self.inner.batch().obs(i));
    }

    fn restart(&mut self, which: impl Fn(usize) -> bool) {
        for i in (0..self.model_return.len()).filter(|&i| which(i)) {
            self.model_return[i] = 0.0;
            self.resetting[i] = false;
            self.head.lock().restart(i);
        }
    }

    fn copy_inner(&mut self) {
        let inner = self.inner.batch();
        self.batch.obs.copy_from_slice(&inner.obs);
        self.batch.copy_outcome(inner);
        if self.autoreset == AutoresetMode::NextStep {
            self.batch.final_obs.copy_from_slice(&inner.final_obs);
        }
    }
}

impl<V: VecEnv> VecEnv for ModelReward<V> {
    fn spec(&self) -> &EnvSpec {
        self.inner.spec()
    }

    fn num_envs(&self) -> usize {
        self.inner.num_envs()
    }

    fn autoreset_mode(&self) -> AutoresetMode {
        self.autoreset
    }

    fn reset(&mut self, seed: Option<u64>, options: ResetOptions) -> proprio::Result<()> {
        self.inner.reset(seed, options)?;
        self.copy_inner();
        self.restart(|_| true);
        Ok(())
    }

    fn reset_envs(&mut self, mask: &[bool], options: ResetOptions) -> proprio::Result<()> {
        self.inner.reset_envs(mask, options)?;
        for i in (0..mask.len()).filter(|&i| mask[i]) {
            self.copy_obs(i);
            self.batch.copy_reset_outcome(i, self.inner.batch());
        }
        self.restart(|i| mask[i]);
        Ok(())
    }

    fn step(&mut self, actions: &[f32]) -> proprio::Result<()> {
        self.inner.step(actions)?;
        self.copy_inner();
        self.stepped.clear();
        self.done.clear();
        for i in 0..self.resetting.len() {
            if std::mem::take(&mut self.resetting[i]) {
                // Next-step mode: this step only started env i's next episode.
                continue;
            }
            let done = self.batch.done(i);
            self.stepped.push(i);
            self.done.push(done);
            self.resetting[i] = done && self.autoreset == AutoresetMode::NextStep;
        }
        self.score()?;
        if self.autoreset == AutoresetMode::SameStep {
            self.reset_finished()?;
        }
        Ok(())
    }

    fn batch(&self) -> &Batch {
        &self.batch
    }

    fn batch_mut(&mut self) -> &mut Batch {
        &mut self.batch
    }

    fn snapshot(&self, env: usize) -> proprio::Result<State> {
        self.inner.snapshot(env)
    }

    fn restore(&mut self, state: &State, envs: &[usize]) -> proprio::Result<()> {
        self.inner.restore(state, envs)?;
        for &i in envs {
            self.copy_obs(i);
        }
        self.restart(|i| envs.contains(&i));
        // Next-step mode: a snapshot taken after its episode ended resets on the next step.
        let ended = state.phase != Phase::Running;
        for &i in envs {
            self.resetting[i] = ended && self.autoreset == AutoresetMode::NextStep;
        }
        Ok(())
    }

    fn scene(&self, env: usize, scene: &mut Scene) -> proprio::Result<()> {
        self.inner.scene(env, scene)
    }
}
