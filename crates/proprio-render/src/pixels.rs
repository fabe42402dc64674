//! Pixel observations: a vector-env wrapper that replaces (or extends) each
//! env's state observation with its camera image, rendered for the whole
//! batch at once after every reset and step.

use crate::{FAR, Frames, RenderConfig, Renderer};
use proprio_core::{
    AutoresetMode, Batch, EnvSpec, Error, ResetOptions, Result, Scene, Space, State, VecEnv,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// What the agent observes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ObsMode {
    /// The env's own state vector.
    #[default]
    State,
    /// An RGB image, `size × size × 3` values in `0..=255`.
    Rgb,
    /// A depth image, `size × size` distances along the camera axis in metres (0: nothing).
    Depth,
    /// The RGB image, then the state vector (a dict of `image` and `state`).
    RgbState,
}

impl fmt::Display for ObsMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::State => "state",
            Self::Rgb => "rgb",
            Self::Depth => "depth",
            Self::RgbState => "rgb+state",
        })
    }
}

impl FromStr for ObsMode {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "state" => Ok(Self::State),
            "rgb" => Ok(Self::Rgb),
            "depth" => Ok(Self::Depth),
            "rgb+state" => Ok(Self::RgbState),
            other => Err(format!(
                "unknown observation mode '{other}' (expected state, rgb, depth or rgb+state)"
            )),
        }
    }
}

impl Serialize for ObsMode {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ObsMode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// How observations are made: the mode, the square image side and the camera
/// (saved with a training run, so its checkpoints are evaluated as they were trained).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObsOptions {
    /// State, image, or both.
    pub mode: ObsMode,
    /// Side of the square image, pixels.
    pub image_size: u32,
    /// Name of the camera (`default`, `top`, or one the env offers), or several
    /// names joined by commas: their images are stacked along the channels, as
    /// ManiSkill's flattened multi-camera observations are.
    pub camera: String,
    /// Observations stacked per step, oldest first (1: no stacking; see
    /// `proprio_core::wrappers::FrameStack`).
    #[serde(default = "one_frame")]
    pub frame_stack: usize,
}

fn one_frame() -> usize {
    1
}

impl Default for ObsOptions {
    fn default() -> Self {
        Self {
            mode: ObsMode::State,
            image_size: 64,
            camera: "default".into(),
            frame_stack: 1,
        }
    }
}

impl ObsOptions {
    /// The cameras named in `camera`, in channel order.
    pub fn cameras(&self) -> impl Iterator<Item = &str> {
        self.camera.split(',').map(str::trim)
    }

    /// The observation space these options give an env whose state space is
    /// `state`: one observation's, stacked `frame_stack` times.
    pub fn space(&self, state: &Space) -> Space {
        let one = self.frame_space(state);
        match self.frame_stack {
            0 | 1 => one,
            k => Space::Tuple {
                spaces: vec![one; k],
            },
        }
    }

    /// The space of one frame (before stacking).
    fn frame_space(&self, state: &Space) -> Space {
        let (h, w) = (self.image_size as usize, self.image_size as usize);
        let views = self.cameras().count();
        let image = Space::Image {
            height: h,
            width: w,
            channels: 3 * views,
        };
        match self.mode {
            ObsMode::State => state.clone(),
            ObsMode::Rgb => image,
            ObsMode::Depth => Space::uniform_box(h * w * views, 0.0, FAR),
            ObsMode::RgbState => Space::Dict {
                spaces: vec![("image".into(), image), ("state".into(), state.clone())],
            },
        }
    }
}

/// The autoreset mode a batch wrapped in [`PixelObs`] runs with, for the
/// wrapper to give `autoreset`: same-step needs the last frame before the
/// reset, so the wrapper resets finished envs itself.
pub fn inner_autoreset(autoreset: AutoresetMode) -> AutoresetMode {
    match autoreset {
        AutoresetMode::SameStep => AutoresetMode::Disabled,
        other => other,
    }
}

/// Wraps a vector env so that its observations are camera images.
///
/// Same-step autoreset needs the image of the last state before the reset, so
/// for it the inner env must run with autoreset disabled and this wrapper
/// resets finished envs itself, after rendering them.
pub struct PixelObs<V> {
    inner: V,
    options: ObsOptions,
    autoreset: AutoresetMode,
    spec: EnvSpec,
    batch: Batch,
    renderer: Renderer,
    scenes: Vec<Scene>,
    frames: Frames,
    finished: Vec<bool>,
    finished_envs: Vec<usize>,
    all_envs: Vec<usize>,
}

impl<V: VecEnv> PixelObs<V> {
    /// Wraps `inner`, giving observations as `options` says and autoreset as
    /// `autoreset` (`inner` must run with [`inner_autoreset`] of it).
    pub fn new(inner: V, options: ObsOptions, autoreset: AutoresetMode) -> Result<Self> {
        let expected = inner_autoreset(autoreset);
        if inner.autoreset_mode() != expected {
            return Err(Error::Options(format!(
                "pixel observations with {autoreset} autoreset need an inner env with {expected} autoreset, not {}",
                inner.autoreset_mode()
            )));
        }
        if options.mode == ObsMode::State {
            return Err(Error::Options(
                "pixel observations need an image mode (rgb, depth or rgb+state)".into(),
            ));
        }
        let mut spec = inner.spec().clone();
        spec.observation_space = options.frame_space(&spec.observation_space);
        let n = inner.num_envs();
        let batch = Batch::new(n, spec.observation_space.flat_dim())?;
        let side = options.image_size;
        let renderer = Renderer::new(RenderConfig {
            width: side,
            height: side,
            floor: true,
        })?;
        Ok(Self {
            inner,
            options,
            autoreset,
            spec,
            batch,
            renderer,
            scenes: vec![Scene::default(); n],
            frames: Frames::default(),
            finished: vec![false; n],
            finished_envs: Vec::with_capacity(n),
            all_envs: (0..n).collect(),
        })
    }

    /// Renders the envs `envs` lists into their observation rows, one camera
    /// after the other; with several cameras, pixel `p`'s values of camera `k`
    /// sit at channels `k·c .. (k+1)·c` (`c`: 3 for RGB, 1 for depth).
    fn observe(&mut self, envs: &[usize]) -> Result<()> {
        for &i in envs {
            self.inner.scene(i, &mut self.scenes[i])?;
        }
        let depth = self.options.mode == ObsMode::Depth;
        let views = self.options.cameras().count();
        let d = self.batch.obs_dim;
        for (view, camera) in self.options.cameras().enumerate() {
            let which = envs.iter().copied();
            self.renderer
                .render_envs(&self.scenes, which, camera, depth, &mut self.frames)?;
            for (k, &i) in envs.iter().enumerate() {
                let row = &mut self.batch.obs[i * d..(i + 1) * d];
                if depth {
                    let values = self.frames.depth(k);
                    for (p, &z) in values.iter().enumerate() {
                        row[p * views + view] = z;
                    }
                    continue;
                }
                let pixels = self.frames.rgb(k);
                for (p, rgb) in pixels.chunks_exact(3).enumerate() {
                    let at = (p * views + view) * 3;
                    for (o, &v) in row[at..at + 3].iter_mut().zip(rgb) {
                        *o = f32::from(v);
                    }
                }
            }
        }
        if self.options.mode == ObsMode::RgbState {
            let image = (self.options.image_size as usize).pow(2) * 3 * views;
            for &i in envs {
                self.batch.obs[i * d + image..(i + 1) * d]
                    .copy_from_slice(self.inner.batch().obs(i));
            }
        }
        Ok(())
    }

    /// Renders every env.
    fn observe_all(&mut self) -> Result<()> {
        let all = std::mem::take(&mut self.all_envs);
        let observed = self.observe(&all);
        self.all_envs = all;
        observed
    }

    /// Same-step autoreset: keeps each finished env's last image and info, then resets it.
    fn reset_finished(&mut self) -> Result<()> {
        self.finished_envs.clear();
        for i in 0..self.finished.len() {
            let done = self.batch.terminated[i] || self.batch.truncated[i];
            self.finished[i] = done;
            if done {
                self.finished_envs.push(i);
                self.batch.keep_final(i);
            }
        }
        if self.finished_envs.is_empty() {
            return Ok(());
        }
        self.inner.reset_envs(&self.finished, None)?;
        let envs = std::mem::take(&mut self.finished_envs);
        for &i in &envs {
            self.batch.infos[i].clone_from(&self.inner.batch().infos[i]);
        }
        let observed = self.observe(&envs);
        self.finished_envs = envs;
        observed
    }
}

impl<V: VecEnv> VecEnv for PixelObs<V> {
    fn spec(&self) -> &EnvSpec {
        &self.spec
    }

    fn num_envs(&self) -> usize {
        self.inner.num_envs()
    }

    fn autoreset_mode(&self) -> AutoresetMode {
        self.autoreset
    }

    fn reset(&mut self, seed: Option<u64>, options: ResetOptions) -> Result<()> {
        self.inner.reset(seed, options)?;
        self.batch.copy_outcome(self.inner.batch());
        self.observe_all()
    }

    fn reset_envs(&mut self, mask: &[bool], options: ResetOptions) -> Result<()> {
        self.inner.reset_envs(mask, options)?;
        let mut envs = std::mem::take(&mut self.finished_envs);
        envs.clear();
        envs.extend(mask.iter().enumerate().filter(|(_, m)| **m).map(|(i, _)| i));
        for &i in &envs {
            self.batch.copy_reset_outcome(i, self.inner.batch());
        }
        let observed = self.observe(&envs);
        self.finished_envs = envs;
        observed
    }

    fn step(&mut self, actions: &[f32]) -> Result<()> {
        self.inner.step(actions)?;
        self.batch.copy_outcome(self.inner.batch());
        self.observe_all()?;
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

    fn snapshot(&self, env: usize) -> Result<State> {
        self.inner.snapshot(env)
    }

    fn restore(&mut self, state: &State, envs: &[usize]) -> Result<()> {
        self.inner.restore(state, envs)?;
        self.observe(envs)
    }

    fn scene(&self, env: usize, scene: &mut Scene) -> Result<()> {
        self.inner.scene(env, scene)
    }
}
