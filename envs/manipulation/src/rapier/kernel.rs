//! N manipulation envs on CPU threads: one rapier world per env; threads take
//! a few worlds at a time, and each world is stepped whole by one thread, so
//! results do not depend on the thread count or on which thread stepped what.

use super::task::{self as rapier_task, Rapier};
use super::template::Template;
use super::world::{World, WorldState};
use crate::config::Settings;
use crate::controller::ArmController;
use crate::task::{self, BlowUp, TaskState, write_info};
use proprio_core::{
    Batch, EnvRng, EnvSpec, Error, Family, Kernel, MAX_THREADS, ResetOptions, Result, Rows,
    WorkerPool, command,
};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex, PoisonError};

/// The full state of one env: its rapier world and the task's side.
#[derive(Clone, Serialize, Deserialize)]
pub struct ManipState {
    /// Everything rapier steps (bodies, multibody, contacts, broad phase,
    /// islands), saved as base64 of its bincode encoding: exact for every
    /// float, infinities included (JSON numbers cannot hold those).
    #[serde(with = "blob")]
    pub physics: WorldState,
    /// Goal, success counter and controller memory.
    pub task: TaskState,
}

mod blob {
    use super::WorldState;
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _, ser::Error as _};

    pub fn serialize<S: Serializer>(physics: &WorldState, s: S) -> Result<S::Ok, S::Error> {
        let bytes = bincode::serialize(physics).map_err(S::Error::custom)?;
        s.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<WorldState, D::Error> {
        let text = String::deserialize(d)?;
        let bytes = STANDARD.decode(text).map_err(D::Error::custom)?;
        bincode::deserialize(&bytes).map_err(D::Error::custom)
    }
}

/// One env: its world and task state.
struct Slot {
    world: World,
    task: TaskState,
}

/// What every thread reads.
struct Shared {
    settings: Settings,
    scene: Template,
    controller: ArmController,
}

/// Steps N manipulation envs on CPU threads.
pub struct RapierKernel {
    spec: Arc<EnvSpec>,
    shared: Shared,
    slots: Vec<Slot>,
    /// The start of each env's next episode.
    staged: Vec<ManipState>,
    pool: WorkerPool,
}

/// Worlds a thread takes at a time: few enough to even out uneven worlds
/// between threads, enough that taking them costs nothing noticeable.
const CHUNK: usize = 4;

/// A run of envs with their staged starts, commands, actions and batch rows.
struct Part<'a> {
    slots: &'a mut [Slot],
    staged: &'a mut [ManipState],
    commands: &'a [u32],
    actions: &'a [f32],
    rows: Rows<'a>,
}

impl<'a> Part<'a> {
    /// The first `size` envs, and the rest if any.
    fn split(self, size: usize, dim: usize) -> (Part<'a>, Option<Part<'a>>) {
        let size = size.min(self.slots.len());
        if size == self.slots.len() {
            return (self, None);
        }
        let (slots, slots_tail) = self.slots.split_at_mut(size);
        let (staged, staged_tail) = self.staged.split_at_mut(size);
        let (commands, commands_tail) = self.commands.split_at(size);
        let (actions, actions_tail) = self.actions.split_at((size * dim).min(self.actions.len()));
        let (rows, rows_tail) = self.rows.split_at(size);
        let head = Part {
            slots,
            staged,
            commands,
            actions,
            rows,
        };
        let tail = Part {
            slots: slots_tail,
            staged: staged_tail,
            commands: commands_tail,
            actions: actions_tail,
            rows: rows_tail,
        };
        (head, Some(tail))
    }

    fn run(mut self, shared: &Shared) {
        let s = &shared.settings;
        let parts = shared.scene.parts();
        let dim = s.control.action_dim();
        for (k, slot) in self.slots.iter_mut().enumerate() {
            let cmd = self.commands[k];
            if cmd == 0 {
                continue;
            }
            if cmd & command::RESET != 0 {
                start(slot, &mut self.staged[k]);
                self.rows.clear_flags(k);
                write_info(
                    &mut self.rows.infos[k],
                    s,
                    &Rapier(slot.world.physics(), parts),
                    &slot.task,
                    None,
                );
            } else {
                let action = &self.actions[k * dim..(k + 1) * dim];
                let out = rapier_task::control_step(
                    s,
                    parts,
                    &shared.controller,
                    &mut slot.world,
                    &mut slot.task,
                    action,
                );
                let cut = out.blow_up != BlowUp::None;
                self.rows.reward[k] = out.reward;
                self.rows.terminated[k] = out.success;
                self.rows.truncated[k] = cut || cmd & command::LAST != 0;
                self.rows.has_final[k] = false;
                write_info(
                    &mut self.rows.infos[k],
                    s,
                    &Rapier(slot.world.physics(), parts),
                    &slot.task,
                    Some(&out),
                );
                let ends = out.success || self.rows.truncated[k];
                if cmd & command::SAME_STEP != 0 && ends {
                    task::observe(
                        s,
                        &Rapier(slot.world.physics(), parts),
                        &slot.task,
                        self.rows.obs(k),
                    );
                    self.rows.keep_final(k);
                    start(slot, &mut self.staged[k]);
                    write_info(
                        &mut self.rows.infos[k],
                        s,
                        &Rapier(slot.world.physics(), parts),
                        &slot.task,
                        None,
                    );
                }
            }
            task::observe(
                s,
                &Rapier(slot.world.physics(), parts),
                &slot.task,
                self.rows.obs(k),
            );
        }
    }
}

/// Starts the staged episode (the staged slot is left with the old world, to be restaged).
fn start(slot: &mut Slot, staged: &mut ManipState) {
    slot.world.restart(&mut staged.physics);
    slot.task = staged.task;
}

impl RapierKernel {
    /// `num_envs` envs of `spec` on `threads` worker threads.
    pub fn new(
        spec: Arc<EnvSpec>,
        settings: Settings,
        num_envs: usize,
        threads: usize,
    ) -> Result<Self> {
        let threads = threads.clamp(1, MAX_THREADS).min(num_envs.max(1));
        let pool = WorkerPool::new(threads)
            .map_err(|e| Error::Shape(format!("cannot start {threads} worker threads: {e}")))?;
        let scene = Template::new(settings.cubes, settings.dt)
            .map_err(|e| Error::Backend(e.to_string()))?;
        let controller = ArmController::panda().map_err(|e| Error::Backend(e.to_string()))?;
        let shared = Shared {
            settings,
            scene,
            controller,
        };
        let blank = || {
            let (physics, task) = rapier_task::draw(
                &settings,
                &shared.scene,
                &shared.controller,
                &mut proprio_core::episode_rng(0, 0, 0),
            );
            ManipState { physics, task }
        };
        let staged: Vec<ManipState> = (0..num_envs).map(|_| blank()).collect();
        let slots = staged
            .iter()
            .map(|s| Slot {
                world: World::from_physics(s.physics.clone()),
                task: s.task,
            })
            .collect();
        Ok(Self {
            spec,
            shared,
            slots,
            staged,
            pool,
        })
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }
}

impl Kernel for RapierKernel {
    type State = ManipState;

    fn spec(&self) -> &EnvSpec {
        &self.spec
    }

    fn num_envs(&self) -> usize {
        self.slots.len()
    }

    fn draw(&self, rng: &mut EnvRng, options: ResetOptions) -> Result<ManipState> {
        crate::Manipulation::no_options(options)?;
        let (physics, task) = rapier_task::draw(
            &self.shared.settings,
            &self.shared.scene,
            &self.shared.controller,
            rng,
        );
        Ok(ManipState { physics, task })
    }

    fn stage(&mut self, env: usize, start: &ManipState) -> Result<()> {
        self.staged[env].clone_from(start);
        Ok(())
    }

    fn run(&mut self, commands: &[u32], actions: &[f32], batch: &mut Batch) -> Result<()> {
        let dim = self.shared.settings.control.action_dim();
        let rest = Mutex::new(Some(Part {
            slots: &mut self.slots,
            staged: &mut self.staged,
            commands,
            actions,
            rows: batch.rows_mut(),
        }));
        let shared = &self.shared;
        // Threads take CHUNK worlds at a time until none are left: worlds cost
        // unevenly (contacts), and each world's result does not depend on
        // which thread steps it.
        self.pool.run(&|_| {
            loop {
                let chunk = {
                    let mut left = rest.lock().unwrap_or_else(PoisonError::into_inner);
                    let Some(part) = left.take() else { break };
                    let (chunk, tail) = part.split(CHUNK, dim);
                    *left = tail;
                    chunk
                };
                chunk.run(shared);
            }
        });
        Ok(())
    }

    fn scene(&self, env: usize, scene: &mut proprio_core::Scene) -> Result<()> {
        let slot = &self.slots[env];
        let shared = &self.shared;
        super::visuals::manipulation(
            &shared.settings,
            slot.world.physics(),
            shared.scene.parts(),
            &slot.task,
            scene,
        );
        Ok(())
    }

    fn state(&self, env: usize) -> Result<ManipState> {
        let slot = &self.slots[env];
        Ok(ManipState {
            physics: slot.world.physics().clone(),
            task: slot.task,
        })
    }

    fn set_state(&mut self, env: usize, state: &ManipState, batch: &mut Batch) -> Result<()> {
        let parts = self.shared.scene.parts();
        if !state.physics.fits(parts) {
            return Err(Error::State(format!(
                "the world in this state is not a {} scene",
                self.spec.id
            )));
        }
        if !state.physics.is_finite() || !task::is_finite(&state.task) {
            return Err(Error::State(
                "the state holds NaN or infinite values".into(),
            ));
        }
        let s = &self.shared.settings;
        let instructions = crate::instruct::Instruction::all(s.cubes);
        let fits = match state.task.instruction {
            Some(i) => s.task == crate::TaskKind::Instruct && instructions.contains(&i),
            None => s.task != crate::TaskKind::Instruct,
        };
        if !fits {
            return Err(Error::State(format!(
                "instruction {:?} does not fit {} with {} cubes",
                state.task.instruction, self.spec.id, s.cubes
            )));
        }
        crate::instruct::words::check_phrasing(f32::from(state.task.phrasing), s.typed.is_some())
            .map_err(Error::State)?;
        let slot = &mut self.slots[env];
        slot.world = World::from_physics(state.physics.clone());
        slot.task = state.task;
        task::observe(
            &self.shared.settings,
            &Rapier(slot.world.physics(), parts),
            &slot.task,
            batch.rows_mut().obs(env),
        );
        Ok(())
    }
}
