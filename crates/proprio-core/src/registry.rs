//! The registry: `make("classic/cartpole-v1", config)` for single and batched envs.

use crate::agent::Agent;
use crate::entry::{self, EnvEntry, split_config};
use crate::env::{Env, EnvSpec};
use crate::error::{Error, Result};
use crate::memory;
use crate::task::{Task, TaskEnv};
use crate::threaded::ThreadedVecEnv;
use crate::vec_env::{Backend, Batch, VecEnv, VecOptions};
use crate::wrappers::TimeLimit;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Builds one env from a config object.
pub type MakeEnv = Box<dyn Fn(&Value) -> Result<Box<dyn Env>> + Send + Sync>;
/// Builds a batch of envs from a config object.
pub type MakeVecEnv =
    Box<dyn Fn(&Value, usize, VecOptions) -> Result<Box<dyn VecEnv>> + Send + Sync>;

/// Builds an env's scripted agent (its hand-written baseline) for envs of `spec`.
pub type MakeScripted = Box<dyn Fn(&EnvSpec) -> Result<Box<dyn Agent + Send>> + Send + Sync>;

/// How the viewer's keyboard drives an env's actions, for envs of a spec.
pub type MakeTeleop = Box<dyn Fn(&EnvSpec) -> Result<Teleop> + Send + Sync>;

/// What the viewer's keys do for one env: the family says it, the viewer never guesses from an id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Teleop {
    /// Names of the action components, in order (empty: "action k").
    pub labels: Vec<&'static str>,
    /// The key pair of each component (empty: in order), e.g. a game pad's layout.
    pub slots: Vec<usize>,
    /// The discrete action taken while no key is held.
    pub rest: u32,
    /// A typed digit d is token d + `token_offset`.
    pub token_offset: u32,
}

/// Describes a state observation in words (`None` when its layout is not the
/// one the captions were written for): the captions an in-domain CLIP is
/// trained on (`proprio reward-model fit-clip`).
pub type Caption = fn(obs: &[f32]) -> Option<String>;

/// Completes a config recorded by a run written before runs kept their whole
/// env config, with the defaults it was trained under (a family whose default changed since).
pub type Legacy = fn(config: &mut Value);

struct Registered {
    entry: EnvEntry,
    default_config: Value,
    make: MakeEnv,
    make_vec: MakeVecEnv,
    scripted: Option<MakeScripted>,
    teleop: Option<MakeTeleop>,
    caption: Option<Caption>,
    legacy: Option<Legacy>,
}

/// All known envs, by id.
#[derive(Default)]
pub struct Registry {
    envs: BTreeMap<&'static str, Registered>,
}

fn parse_task_config<T: Task>(id: &str, config: &Value) -> Result<T::Config> {
    serde_json::from_value(config.clone()).map_err(|e| Error::Config {
        id: id.into(),
        message: e.to_string(),
    })
}

/// Builds `count` envs of task `T` sharing one spec.
fn build_tasks<T: Task>(
    entry: &EnvEntry,
    config: &T::Config,
    limit: Option<u64>,
    count: usize,
) -> Result<Vec<TimeLimit<TaskEnv<T>>>> {
    let tasks = (0..count)
        .map(|_| T::new(config).map_err(|message| entry::config_error(entry, message)))
        .collect::<Result<Vec<_>>>()?;
    let first = tasks
        .first()
        .ok_or_else(|| Error::Shape("num_envs must be at least 1".into()))?;
    let spec = entry::entry_spec(
        entry,
        config,
        limit,
        first.observation_space(),
        first.action_space(),
        entry.physics_steps_per_step,
    )?;
    Ok(tasks
        .into_iter()
        .map(|task| TimeLimit::new(TaskEnv::new(task, Arc::clone(&spec)), limit))
        .collect())
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry holding what `register` adds, e.g. `Registry::with(proprio_drones::register)`.
    pub fn with(register: impl FnOnce(&mut Registry)) -> Self {
        let mut registry = Self::new();
        register(&mut registry);
        registry
    }

    /// Registers a [`Task`]: single envs run it through [`TaskEnv`] and
    /// [`TimeLimit`], batches through [`ThreadedVecEnv`].
    pub fn register_task<T: Task>(&mut self, entry: EnvEntry) {
        let make: MakeEnv = Box::new(move |config| {
            let (rest, limit) = split_config(entry.id, config, entry.max_episode_steps)?;
            let config = parse_task_config::<T>(entry.id, &rest)?;
            let env = build_tasks::<T>(&entry, &config, limit, 1)?.pop();
            Ok(Box::new(
                env.ok_or_else(|| Error::Shape("no env was built".into()))?,
            ))
        });
        let make_vec: MakeVecEnv = Box::new(move |config, num_envs, options| {
            let (rest, limit) = split_config(entry.id, config, entry.max_episode_steps)?;
            let config = parse_task_config::<T>(entry.id, &rest)?;
            if options.backend != Backend::Cpu {
                return Err(Error::Backend(format!(
                    "{} runs on the cpu backend only",
                    entry.id
                )));
            }
            let envs = build_tasks::<T>(&entry, &config, limit, num_envs)?;
            Ok(Box::new(ThreadedVecEnv::new(envs, options)?))
        });
        let default_config = serde_json::to_value(T::Config::default()).unwrap_or(Value::Null);
        self.register(entry, default_config, make, make_vec);
    }

    /// Registers an env with its own constructors (e.g. a GPU-batched vector env).
    pub fn register(
        &mut self,
        entry: EnvEntry,
        default_config: Value,
        make: MakeEnv,
        make_vec: MakeVecEnv,
    ) {
        self.envs.insert(
            entry.id,
            Registered {
                entry,
                default_config,
                make,
                make_vec,
                scripted: None,
                teleop: None,
                caption: None,
                legacy: None,
            },
        );
    }

    /// Registers the scripted agent (hand-written baseline) of an already registered env.
    pub fn register_scripted(&mut self, id: &str, make: MakeScripted) -> Result<()> {
        self.get_mut(id)?.scripted = Some(make);
        Ok(())
    }

    /// Registers what the viewer's keys do for an already registered env.
    pub fn register_teleop(&mut self, id: &str, make: MakeTeleop) -> Result<()> {
        self.get_mut(id)?.teleop = Some(make);
        Ok(())
    }

    /// What the viewer's keys do for envs of `spec` (the default when the env says nothing).
    pub fn teleop(&self, spec: &EnvSpec) -> Result<Teleop> {
        match &self.get(&spec.id)?.teleop {
            Some(make) => make(spec),
            None => Ok(Teleop::default()),
        }
    }

    /// Registers how an already registered env's observations are captioned.
    pub fn register_caption(&mut self, id: &str, caption: Caption) -> Result<()> {
        self.get_mut(id)?.caption = Some(caption);
        Ok(())
    }

    /// Registers how configs of `id` recorded by older runs are completed.
    pub fn register_legacy(&mut self, id: &str, legacy: Legacy) -> Result<()> {
        self.get_mut(id)?.legacy = Some(legacy);
        Ok(())
    }

    /// Completes a config of `id` that an older run recorded (see [`Legacy`]); unknown ids are left alone.
    pub fn complete_legacy(&self, id: &str, config: &mut Value) {
        if let Ok(Some(legacy)) = self.get(id).map(|r| r.legacy) {
            legacy(config);
        }
    }

    /// How `id`'s observations are captioned.
    pub fn caption(&self, id: &str) -> Result<Caption> {
        self.get(id)?.caption.ok_or_else(|| Error::Config {
            id: id.into(),
            message: "this env has no captions of its states".into(),
        })
    }

    /// The scripted agent of `id` for envs of `spec`.
    pub fn scripted(&self, id: &str, spec: &EnvSpec) -> Result<Box<dyn Agent + Send>> {
        match &self.get(id)?.scripted {
            Some(make) => make(spec),
            None => Err(Error::Config {
                id: id.into(),
                message: "this env has no scripted controller".into(),
            }),
        }
    }

    fn get_mut(&mut self, id: &str) -> Result<&mut Registered> {
        let hint = self.closest(id);
        self.envs.get_mut(id).ok_or_else(|| Error::UnknownEnv {
            id: id.into(),
            hint,
        })
    }

    fn get(&self, id: &str) -> Result<&Registered> {
        self.envs.get(id).ok_or_else(|| Error::UnknownEnv {
            id: id.into(),
            hint: self.closest(id),
        })
    }

    fn closest(&self, id: &str) -> Option<String> {
        self.envs
            .keys()
            .map(|k| (edit_distance(k, id), *k))
            .filter(|(d, k)| *d <= k.len() / 3 || k.ends_with(&format!("/{id}")))
            .min()
            .map(|(_, k)| k.to_string())
    }

    /// Builds one env; `config` is a JSON object (or null) of the env's config keys.
    pub fn make(&self, id: &str, config: &Value) -> Result<Box<dyn Env>> {
        (self.get(id)?.make)(config)
    }

    /// Builds `num_envs` envs stepped as one batch.
    pub fn make_vec(
        &self,
        id: &str,
        num_envs: usize,
        config: &Value,
        options: VecOptions,
    ) -> Result<Box<dyn VecEnv>> {
        if num_envs == 0 {
            return Err(Error::Shape("num_envs must be at least 1".into()));
        }
        let registered = self.get(id)?;
        let bytes = self.estimate_bytes(id, config)? * num_envs as u128;
        memory::check(&format!("a batch of {num_envs} {id} envs"), bytes)?;
        (registered.make_vec)(config, num_envs, options)
    }

    /// Bytes one env of a batch takes, estimated from a probe env: its batch
    /// rows, its own size and its reset state as a snapshot (for the physics
    /// envs the world's serialised size, a lower bound of its heap).
    fn estimate_bytes(&self, id: &str, config: &Value) -> Result<u128> {
        let mut probe = self.make(id, config)?;
        probe.reset(Some(0), None)?;
        let snapshot =
            serde_json::to_string(&probe.snapshot()?.state).map_or(0, |s| s.len() as u128);
        let obs_dim = probe.spec().observation_space.flat_dim();
        Ok(Batch::bytes(1, obs_dim) + std::mem::size_of_val(&*probe) as u128 + snapshot)
    }

    /// The spec an env has under `config`.
    pub fn spec(&self, id: &str, config: &Value) -> Result<EnvSpec> {
        Ok(self.make(id, config)?.spec().clone())
    }

    /// The entry and default config of `id`.
    pub fn entry(&self, id: &str) -> Result<(&EnvEntry, &Value)> {
        let r = self.get(id)?;
        Ok((&r.entry, &r.default_config))
    }

    /// Registered ids in sorted order.
    pub fn ids(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.envs.keys().copied()
    }
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
