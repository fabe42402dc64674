//! `proprio train`: build or resume a run and train it in the one loop.
//! Which algorithm trains on which action space is the table [`LEARNERS`]:
//! adding an algorithm is its own folder under `algos/` and one line there.

use crate::algos::{archer, bc, dsac, grpo, ppo, sac, td3};
use crate::base::device::ComputeDevice;
use crate::base::error::{LearnError, Result};
use crate::base::seeds::evaluation_seed;
use crate::env::EnvSource;
use crate::learner::{self, Learner};
use crate::nets::acting::{POLICY_FILE, PolicyFile};
use crate::policy::Policy;
use crate::recording::{RecordOptions, record_policy};
use crate::run::{Algo, RUN_FORMAT, Run, RunInfo, default_dir, load_run, read_json, to_json};
use proprio::Space;
use proprio::serde_json::{Map, Value, json};
use std::fs;
use std::path::{Path, PathBuf};

/// What the user asked `proprio train` for.
#[derive(Debug, Clone)]
pub struct TrainRequest {
    /// Learner.
    pub algo: Algo,
    /// Env id and config.
    pub env: EnvSource,
    /// Seed.
    pub seed: u64,
    /// Where the networks run.
    pub device: ComputeDevice,
    /// Env worker threads (`None`: all cores).
    pub threads: Option<usize>,
    /// Hyper-parameter overrides (`--set key=value`), applied over the defaults and the env's tuned values.
    pub overrides: Map<String, Value>,
    /// Run directory (default `runs/<env>/<algo>-<seed>-<time>`).
    pub out: Option<PathBuf>,
    /// Film the policy into `videos/` every this many env steps (at the next checkpoint).
    pub video_every: Option<u64>,
    /// Start from the policy weights of this run (`--init`; its last checkpoint).
    pub init: Option<PathBuf>,
}

/// The action spaces a table entry trains on.
#[derive(Clone, Copy)]
enum Acts {
    /// Token answers.
    Tokens,
    /// A box (continuous actions).
    Box,
    /// Any space the entries above did not claim.
    Any,
}

impl Acts {
    fn admits(self, space: &Space) -> bool {
        match self {
            Self::Tokens => matches!(space, Space::Tokens { .. }),
            Self::Box => matches!(space, Space::Box { .. }),
            Self::Any => true,
        }
    }

    /// What the entry needs, for the error that refuses another space.
    fn needs(self) -> &'static str {
        match self {
            Self::Tokens => "token answers",
            Self::Box => "a box action space",
            Self::Any => "an action space",
        }
    }
}

/// How one algorithm makes its defaults and its learner.
struct Entry {
    algo: Algo,
    acts: Acts,
    defaults: fn(&Space) -> Result<Value>,
    build: fn(&RunInfo) -> Result<Box<dyn Learner>>,
    /// What `proprio train` says when this row is not the algorithm's usual learner.
    note: Option<&'static str>,
}

/// Every learner, first match wins. PPO on token answers is the group
/// learner with `advantage = gae` (token-level PPO), and says so.
const LEARNERS: &[Entry] = &[
    Entry {
        algo: Algo::Ppo,
        acts: Acts::Tokens,
        defaults: grpo::token_ppo_defaults,
        build: grpo::build,
        note: Some(
            "PPO on token answers trains the sequence policy with the group learner's token-level PPO (advantage = gae); --algo grpo for group-relative advantages",
        ),
    },
    Entry {
        algo: Algo::Ppo,
        acts: Acts::Any,
        defaults: ppo::defaults,
        build: ppo::build,
        note: None,
    },
    Entry {
        algo: Algo::Sac,
        acts: Acts::Box,
        defaults: sac::defaults,
        build: sac::build,
        note: None,
    },
    Entry {
        algo: Algo::Td3,
        acts: Acts::Box,
        defaults: td3::defaults,
        build: td3::build,
        note: None,
    },
    Entry {
        algo: Algo::Dsac,
        acts: Acts::Box,
        defaults: dsac::defaults,
        build: dsac::build,
        note: None,
    },
    Entry {
        algo: Algo::Grpo,
        acts: Acts::Any,
        defaults: grpo::defaults,
        build: grpo::build,
        note: None,
    },
    Entry {
        algo: Algo::Archer,
        acts: Acts::Tokens,
        defaults: archer::defaults,
        build: archer::build,
        note: None,
    },
    Entry {
        algo: Algo::Bc,
        acts: Acts::Any,
        defaults: bc::defaults,
        build: bc::build,
        note: None,
    },
];

fn entry(algo: Algo, action_space: &Space) -> Result<&'static Entry> {
    LEARNERS
        .iter()
        .find(|e| e.algo == algo && e.acts.admits(action_space))
        .ok_or_else(|| {
            let needs: Vec<&str> = LEARNERS
                .iter()
                .filter(|e| e.algo == algo)
                .map(|e| e.acts.needs())
                .collect();
            LearnError::Config(format!(
                "{} needs {}; this env acts in {action_space}",
                algo.name().to_uppercase(),
                needs.join(" or ")
            ))
        })
}

/// The default hyper-parameters of `algo` for `action_space`, as JSON.
pub fn default_config(algo: Algo, action_space: &Space) -> Result<Value> {
    (entry(algo, action_space)?.defaults)(action_space)
}

fn merged(mut config: Value, overrides: &Map<String, Value>) -> Result<Value> {
    let Value::Object(map) = &mut config else {
        return Err(LearnError::Config("defaults are not an object".into()));
    };
    for (key, value) in overrides {
        if !map.contains_key(key) {
            let known: Vec<&str> = map.keys().map(String::as_str).collect();
            return Err(LearnError::Config(format!(
                "unknown key '{key}' (known: {})",
                known.join(", ")
            )));
        }
        map.insert(key.clone(), value.clone());
    }
    Ok(config)
}

/// Builds the learner a run describes, training to `total_steps` when given.
fn build(info: &RunInfo, total_steps: Option<u64>) -> Result<Box<dyn Learner>> {
    let spec = proprio::registry().spec(&info.env.id, &info.env.config)?;
    let entry = entry(info.algo, &spec.action_space)?;
    let mut info = info.clone();
    info.env.reward_device = info.device;
    if let Some(total) = total_steps {
        info.config["total_steps"] = json!(total);
    }
    (entry.build)(&info)
}

/// Starts a new run (saying on stderr, next to its progress bar, which tuned values it applied); returns its directory.
pub fn train(request: TrainRequest) -> Result<PathBuf> {
    let recipe = crate::tuned(&request.env.id, request.algo, request.env.obs.mode)?;
    let mut env = request.env;
    if let Some(recipe) = &recipe {
        env.config = crate::tuned::env_config(recipe, env.config)?;
    }
    let spec = proprio::registry().spec(&env.id, &env.config)?;
    let mut config = default_config(request.algo, &spec.action_space)?;
    if let Some(recipe) = &recipe {
        config = merged(config, &recipe.values)?;
    }
    let config = merged(config, &request.overrides)?;
    let info = RunInfo {
        algo: request.algo,
        // The whole env config, every default spelled out: a later change of a
        // default (the manipulation physics') does not change this run.
        env: EnvSource {
            config: spec.config.clone(),
            ..env
        },
        seed: request.seed,
        device: request.device,
        threads: request.threads,
        config,
        video_every: request.video_every,
        init: request.init.clone(),
        format: RUN_FORMAT,
    };
    // A bad eval_config is refused now, not at the first evaluation.
    info.env.for_evaluation()?;
    let dir = request.out.unwrap_or_else(|| default_dir(&info));
    if let Some(note) = entry(info.algo, &spec.action_space)?.note {
        eprintln!("{note}");
    }
    let mut learner = build(&info, None)?;
    learner.cadence().check(learner.name())?;
    if let Some(source) = &request.init {
        init_from(learner.as_mut(), &info, source)?;
    }
    if let Some(recipe) = recipe {
        let keys: Vec<&str> = recipe.values.keys().map(String::as_str).collect();
        let env_keys = if recipe.env.is_empty() {
            String::new()
        } else {
            format!(" and env config {}", Value::Object(recipe.env.clone()))
        };
        eprintln!(
            "tuned recipe {} / {} ({}): {}{env_keys}; --set and --config override them",
            info.env.id,
            recipe.key,
            recipe.source,
            keys.join(", ")
        );
    }
    let total = learner.cadence().total_steps;
    let mut run = Run::create(dir, info, total)?;
    learner::train(learner.as_mut(), &mut run, &mut record_video)?;
    run.finish();
    Ok(run.dir)
}

/// Loads the acting network of the run in `source` into `learner`, which
/// must train on the same observations and actions with the same network.
fn init_from(learner: &mut dyn Learner, info: &RunInfo, source: &Path) -> Result<()> {
    let (theirs, progress, checkpoint) = load_run(source)?;
    let refuse = |what: String| LearnError::Config(format!("--init {}: {what}", source.display()));
    let spaces = |i: &RunInfo| -> Result<(Space, Space)> {
        let spec = proprio::registry().spec(&i.env.id, &i.env.config)?;
        Ok((i.env.observation_space()?, spec.action_space))
    };
    if theirs.env.id != info.env.id || spaces(&theirs)? != spaces(info)? {
        return Err(refuse(format!(
            "trained on {} with other observations or actions than this run's {}",
            theirs.env.id, info.env.id
        )));
    }
    let file: PolicyFile = read_json(&checkpoint.join(POLICY_FILE))?;
    let ours = learner
        .policy()
        .ok_or_else(|| refuse(format!("{} has no policy to start from", learner.name())))?;
    if file.net.architecture() != ours.net.architecture() {
        return Err(refuse(format!(
            "its network {} is not this run's {}",
            to_json(&file.net)?,
            to_json(&ours.net)?
        )));
    }
    learner.init_from(&checkpoint.join(&file.weights), progress.stats.as_ref())
}

/// Continues a run from its last checkpoint, optionally to a new `total_steps`.
pub fn resume(dir: PathBuf, total_steps: Option<u64>) -> Result<PathBuf> {
    let (info, progress, checkpoint) = load_run(&dir)?;
    let mut learner = build(&info, total_steps)?;
    // The run directory itself, also when `dir` named its `checkpoint/`.
    let dir = checkpoint.parent().map_or(dir, Path::to_path_buf);
    let total = learner.cadence().total_steps;
    let mut run = Run::resume(dir, info, &progress, total)?;
    learner::resume(learner.as_mut(), progress, &checkpoint)?;
    learner::train(learner.as_mut(), &mut run, &mut record_video)?;
    run.finish();
    Ok(run.dir)
}

/// With `video_every`, films the checkpoint just saved (four deterministic
/// episodes from the evaluation seed stream) as `videos/step-N.gif`, N the
/// last multiple of `video_every` reached, unless that video exists (a resumed run).
fn record_video(run: &Run, global_step: u64) -> Result<()> {
    let Some(every) = run.info.video_every.filter(|&e| e > 0) else {
        return Ok(());
    };
    let reached = global_step / every * every;
    let videos = run.dir.join("videos");
    let path = videos.join(format!("step-{reached}.gif"));
    if reached == 0 || path.exists() {
        return Ok(());
    }
    fs::create_dir_all(&videos).map_err(LearnError::io(&videos))?;
    let mut policy = Policy::load(&run.dir)?;
    let options = RecordOptions {
        episodes: 1,
        columns: 2,
        rows: 2,
        image_size: 128,
        camera: "default".into(),
        fps: 20.0,
        max_steps: 500,
        seed: evaluation_seed(run.info.seed),
        overwrite: false,
        overlay: true,
    };
    record_policy(&mut policy, &options, &path).map(|_| ())
}
