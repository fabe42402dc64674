//! # proprio
//!
//! Every Proprio environment family behind one registry. Depend on this crate
//! (and [`proprio_core`]) to step any registered env from your own agent:
//!
//! ```
//! let mut env = proprio::make("classic/cartpole-v1", &proprio::serde_json::Value::Null).unwrap();
//! let (obs, _info) = env.reset(Some(0), None).unwrap();
//! assert_eq!(obs.len(), 4);
//! ```

pub use proprio_core as core;
pub use proprio_core::*;
#[cfg(feature = "render")]
pub use proprio_render as render;

use std::sync::OnceLock;

/// The registry holding every env family compiled in (see the crate features).
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        #[allow(unused_mut)]
        let mut registry = Registry::new();
        #[cfg(feature = "classic")]
        proprio_classic::register(&mut registry);
        #[cfg(feature = "drones")]
        proprio_drones::register(&mut registry);
        #[cfg(feature = "manipulation")]
        proprio_manipulation::register(&mut registry);
        #[cfg(feature = "driving")]
        proprio_driving::register(&mut registry);
        #[cfg(feature = "language")]
        proprio_language::register(&mut registry);
        registry
    })
}

/// Builds one registered env (Gymnasium's `make`).
pub fn make(id: &str, config: &serde_json::Value) -> Result<Box<dyn Env>> {
    registry().make(id, config)
}

/// Builds `num_envs` registered envs stepped as one batch (Gymnasium's `make_vec`).
pub fn make_vec(
    id: &str,
    num_envs: usize,
    config: &serde_json::Value,
    options: VecOptions,
) -> Result<Box<dyn VecEnv>> {
    registry().make_vec(id, num_envs, config, options)
}

/// Builds a batch whose observations are what `obs` asks for: the state, or
/// camera images rendered offscreen (alone or followed by the state), stacked
/// `obs.frame_stack` times.
#[cfg(feature = "render")]
pub fn make_vec_observed(
    id: &str,
    num_envs: usize,
    config: &serde_json::Value,
    options: VecOptions,
    obs: &render::ObsOptions,
) -> Result<Box<dyn VecEnv>> {
    make_vec_framed(
        id,
        num_envs,
        config,
        options,
        obs,
        &render::FrameSource::new(),
    )
}

/// [`make_vec_observed`] drawing its images from `frames`, so that wrappers
/// added on top (a reward model) share its renderer, scenes and images. In
/// same-step mode the pixel wrapper sees each episode's last frame, and
/// [`wrappers::SameStepAutoreset`] resets the finished envs on top of it.
#[cfg(feature = "render")]
pub fn make_vec_framed(
    id: &str,
    num_envs: usize,
    config: &serde_json::Value,
    options: VecOptions,
    obs: &render::ObsOptions,
    frames: &render::FrameSource,
) -> Result<Box<dyn VecEnv>> {
    let venv: Box<dyn VecEnv> = if obs.mode == render::ObsMode::State {
        make_vec(id, num_envs, config, options)?
    } else {
        let inner = VecOptions {
            autoreset: render::inner_autoreset(options.autoreset),
            ..options
        };
        let venv = make_vec(id, num_envs, config, inner)?;
        let pixels = render::PixelObs::new(venv, obs.clone(), frames)?;
        if options.autoreset == AutoresetMode::SameStep {
            Box::new(wrappers::SameStepAutoreset::new(pixels)?)
        } else {
            Box::new(pixels)
        }
    };
    Ok(match obs.frame_stack {
        0 | 1 => venv,
        k => Box::new(wrappers::FrameStack::new(venv, k)?),
    })
}
