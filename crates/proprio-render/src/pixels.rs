//! Pixel observations: a vector-env wrapper that replaces (or extends) each
//! env's state observation with its camera image, rendered for the whole
//! batch at once after every reset and step.

use crate::{FAR, FrameClient, FrameSource, Frames};
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

/// The autoreset mode an env stack that observes finished episodes (pixel
/// observations, reward models) runs with inside for `autoreset` outside:
/// same-step needs the last frame before the reset, so the stack runs with
/// autoreset disabled and [`SameStepAutoreset`](proprio_core::wrappers::SameStepAutoreset)
/// resets finished envs on top of it.
pub fn inner_autoreset(autoreset: AutoresetMode) -> AutoresetMode {
    match autoreset {
        AutoresetMode::SameStep => AutoresetMode::Disabled,
        other => other,
    }
}

/// Wraps a vector env so that its observations are camera images, drawn from
/// a [`FrameSource`] the stack's other observers (a reward model) share.
///
/// It runs in its inner env's autoreset mode, next-step or disabled; for
/// same-step, wrap it in `SameStepAutoreset` (see [`inner_autoreset`]).
pub struct PixelObs<V> {
    inner: V,
    options: ObsOptions,
    spec: EnvSpec,
    batch: Batch,
    frames: FrameClient,
    pictures: Frames,
    envs: Vec<usize>,
    all_envs: Vec<usize>,
}

impl<V: VecEnv> PixelObs<V> {
    /// Wraps `inner` (next-step or disabled autoreset), observing as `options`
    /// says through `source`.
    pub fn new(inner: V, options: ObsOptions, source: &FrameSource) -> Result<Self> {
        if inner.autoreset_mode() == AutoresetMode::SameStep {
            return Err(Error::Options(
                "pixel observations must see the last frame before a reset: build the inner env with autoreset disabled and wrap SameStepAutoreset outside".into(),
            ));
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
        let frames = source.attach(options.image_size)?;
        Ok(Self {
            inner,
            options,
            spec,
            batch,
            frames,
            pictures: Frames::default(),
            envs: Vec::with_capacity(n),
            all_envs: (0..n).collect(),
        })
    }

    /// Renders the envs `envs` lists into their observation rows, one camera
    /// after the other; with several cameras, pixel `p`'s values of camera `k`
    /// sit at channels `k·c .. (k+1)·c` (`c`: 3 for RGB, 1 for depth).
    fn observe(&mut self, envs: &[usize]) -> Result<()> {
        let depth = self.options.mode == ObsMode::Depth;
        let views = self.options.cameras().count();
        let d = self.batch.obs_dim;
        let n = self.inner.num_envs();
        let inner = &self.inner;
        for (view, camera) in self.options.cameras().enumerate() {
            self.frames.frames(
                n,
                envs,
                camera,
                self.options.image_size,
                depth,
                &|envs, scenes| inner.scenes(envs, scenes),
                &mut self.pictures,
            )?;
            for (k, &i) in envs.iter().enumerate() {
                let row = &mut self.batch.obs[i * d..(i + 1) * d];
                if depth {
                    let values = self.pictures.depth(k);
                    for (p, &z) in values.iter().enumerate() {
                        row[p * views + view] = z;
                    }
                    continue;
                }
                let pixels = self.pictures.rgb(k);
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
        self.frames.moved(all.iter().copied());
        let observed = self.observe(&all);
        self.all_envs = all;
        observed
    }

    /// Renders the envs `envs` lists after they moved.
    fn observe_moved(&mut self, envs: Vec<usize>) -> Result<()> {
        self.frames.moved(envs.iter().copied());
        let observed = self.observe(&envs);
        self.envs = envs;
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
        self.inner.autoreset_mode()
    }

    fn reset(&mut self, seed: Option<u64>, options: ResetOptions) -> Result<()> {
        self.inner.reset(seed, options)?;
        self.batch.copy_outcome(self.inner.batch());
        self.observe_all()
    }

    fn reset_envs(&mut self, mask: &[bool], options: ResetOptions) -> Result<()> {
        self.inner.reset_envs(mask, options)?;
        let mut envs = std::mem::take(&mut self.envs);
        envs.clear();
        envs.extend(mask.iter().enumerate().filter(|(_, m)| **m).map(|(i, _)| i));
        for &i in &envs {
            self.batch.copy_reset_outcome(i, self.inner.batch());
        }
        self.observe_moved(envs)
    }

    fn step(&mut self, actions: &[f32]) -> Result<()> {
        self.inner.step(actions)?;
        self.batch.copy_outcome(self.inner.batch());
        self.observe_all()
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
        self.observe_moved(envs.to_vec())
    }

    fn scene(&self, env: usize, scene: &mut Scene) -> Result<()> {
        self.inner.scene(env, scene)
    }

    fn scenes(&self, envs: &[usize], scenes: &mut [Scene]) -> Result<()> {
        self.inner.scenes(envs, scenes)
    }
}
