//! Reading what the user hands the CLI: configs, action files, snapshots, output paths.

use crate::Failure;
use clap::Args;
use proprio::render::{ObsMode, ObsOptions};
use proprio::serde_json::{self, Value};
use proprio::{Backend, Space, State, VecEnv, VecOptions};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Parses `--config`: inline JSON (`'{"g": 9.81}'`) or the path of a JSON file.
pub fn config(arg: Option<&str>) -> Result<Value, Failure> {
    let Some(arg) = arg else {
        return Ok(Value::Null);
    };
    let (text, origin) = if arg.trim_start().starts_with('{') {
        (arg.to_string(), "--config".to_string())
    } else {
        (read(Path::new(arg))?, arg.to_string())
    };
    serde_json::from_str(&text).map_err(|e| Failure(format!("{origin}: not valid JSON: {e}")))
}

fn read(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure(format!("cannot read {}: {e}", path.display())))
}

/// Reads a snapshot written by `Env::snapshot` (or a bare `{"state": [...]}`).
pub fn state(path: &Path) -> Result<State, Failure> {
    serde_json::from_str(&read(path)?)
        .map_err(|e| Failure(format!("{}: not a valid state file: {e}", path.display())))
}

/// Reads an action file: a JSON array with one action per step, a number
/// (discrete or one-component) or an array of numbers; each is checked against `space`.
pub fn actions(path: &Path, space: &Space) -> Result<Vec<Vec<f32>>, Failure> {
    let name = path.display();
    let doc: Value = serde_json::from_str(&read(path)?)
        .map_err(|e| Failure(format!("{name}: not valid JSON: {e}")))?;
    let Value::Array(steps) = doc else {
        return Err(Failure(format!(
            "{name}: expected a JSON array with one action per step"
        )));
    };
    steps
        .iter()
        .enumerate()
        .map(|(t, v)| {
            let action = match v {
                Value::Array(parts) => parts.iter().map(number).collect::<Option<Vec<f32>>>(),
                other => number(other).map(|x| vec![x]),
            }
            .ok_or_else(|| {
                Failure(format!(
                    "{name}: step {t}: {v} is not a number or an array of numbers"
                ))
            })?;
            space.check(&action).map_err(|e| {
                Failure(format!("{name}: step {t}: invalid action for {space}: {e}"))
            })?;
            Ok(action)
        })
        .collect()
}

fn number(v: &Value) -> Option<f32> {
    v.as_f64().map(|x| x as f32)
}

/// Opens `--out` for writing, refusing to replace an existing file unless `force`.
pub fn output(path: Option<&Path>, force: bool) -> Result<Box<dyn Write>, Failure> {
    match path {
        None => Ok(Box::new(BufWriter::new(std::io::stdout().lock()))),
        Some(p) if p.exists() && !force => Err(Failure(format!(
            "{} already exists; pass --force to overwrite it",
            p.display()
        ))),
        Some(p) => File::create(p)
            .map(|f| Box::new(BufWriter::new(f)) as Box<dyn Write>)
            .map_err(|e| Failure(format!("cannot create {}: {e}", p.display()))),
    }
}

/// The options of the commands that step a batch with random actions (bench, soak).
#[derive(Args)]
pub struct BatchArgs {
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Where the physics runs: cpu threads or gpu (wgpu), for envs that have a GPU backend.
    #[arg(long, default_value = "cpu")]
    pub backend: Backend,
    /// Seed of the envs and of the random actions.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Config as inline JSON or a JSON file.
    #[arg(long)]
    pub config: Option<String>,
    #[command(flatten)]
    pub obs: ObsArgs,
}

/// What the agent observes: the state, or images from a camera.
#[derive(Args, Clone)]
pub struct ObsArgs {
    /// Observations: state, rgb, depth or rgb+state (images rendered offscreen through wgpu).
    #[arg(long, default_value = "state")]
    pub obs: ObsMode,
    /// Side of the square images, pixels.
    #[arg(long, default_value_t = 64)]
    pub image_size: u32,
    /// Camera of the images: default, top, or one the env offers (`proprio info` lists
    /// them); several joined by commas (front,side) stack their images along the channels.
    #[arg(long, default_value = "default")]
    pub camera: String,
    /// Observations stacked per step, oldest first (1: none), for policies that need motion.
    #[arg(long, default_value_t = 1)]
    pub frame_stack: usize,
}

impl ObsArgs {
    /// The library's observation options.
    pub fn options(&self) -> ObsOptions {
        ObsOptions {
            mode: self.obs,
            image_size: self.image_size,
            camera: self.camera.clone(),
            frame_stack: self.frame_stack,
        }
    }

    /// The shape of one observation for the JSON outputs: `[h, w, 3]`, `[h, w]`,
    /// `{"image": [h, w, 3], "state": [d]}` or `[d]` for `state_dim` floats of
    /// state (channels times the cameras); stacked frames give
    /// `{"stack": k, "frame": shape}`, laid out frame after frame.
    pub fn shape(&self, state_dim: usize) -> serde_json::Value {
        let s = self.image_size;
        let views = self.options().cameras().count();
        let frame = match self.obs {
            ObsMode::State => serde_json::json!([state_dim]),
            ObsMode::Rgb => serde_json::json!([s, s, 3 * views]),
            ObsMode::Depth if views == 1 => serde_json::json!([s, s]),
            ObsMode::Depth => serde_json::json!([s, s, views]),
            ObsMode::RgbState => {
                serde_json::json!({"image": [s, s, 3 * views], "state": [state_dim]})
            }
        };
        match self.frame_stack {
            0 | 1 => frame,
            k => serde_json::json!({"stack": k, "frame": frame}),
        }
    }
}

impl BatchArgs {
    /// `num_envs` envs of `env` under these options (`threads` overrides `--threads`).
    pub fn make_vec(
        &self,
        env: &str,
        num_envs: usize,
        threads: Option<usize>,
    ) -> Result<Box<dyn VecEnv>, Failure> {
        let options = VecOptions {
            threads: threads.or(self.threads),
            backend: self.backend,
            ..VecOptions::default()
        };
        Ok(proprio::make_vec_observed(
            env,
            num_envs,
            &config(self.config.as_deref())?,
            options,
            &self.obs.options(),
        )?)
    }
}
