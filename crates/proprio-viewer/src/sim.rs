//! The simulation side of the viewer: the batch of envs, who drives it (a
//! policy or the keyboard), pause / single-step / reset / speed, and the
//! episode bookkeeping shown in the overlay.

use crate::ViewerError;
use crate::teleop::KeyMap;
use bevy::input::ButtonInput;
use bevy::input::keyboard::KeyCode;
use bevy::prelude::*;
use proprio::render::ObsOptions;
use proprio_core::serde_json::Value;
use proprio_core::{ActMode, Agent, AutoresetMode, Scene, VecEnv, VecOptions};
use std::sync::Mutex;

/// Steps per second of a turn-based env (tokens) under a policy, at speed 1.
const TURNS_PER_SECOND: f32 = 4.0;

/// Who chooses the actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// The loaded policy (or scripted controller).
    Agent,
    /// The keyboard.
    Keyboard,
}

/// One finished episode.
#[derive(Debug, Clone, PartialEq)]
pub struct Episode {
    /// Which env of the batch.
    pub env: usize,
    /// Sum of its rewards.
    pub ret: f64,
    /// Its length in steps.
    pub steps: u64,
    /// The env's `success` info at the end, if it reports one.
    pub success: Option<bool>,
}

/// Everything the viewer simulates; systems reach it through [`SimRes`].
pub struct Sim {
    /// Registry ids the picker cycles through.
    pub ids: Vec<&'static str>,
    /// Index of the current env in `ids`.
    pub current: usize,
    /// Config the current env was made with.
    pub config: Value,
    /// What the current env observes (a pixel policy's images, rendered offscreen).
    pub obs: ObsOptions,
    /// Seed of the first reset.
    pub seed: u64,
    /// The batch.
    pub venv: Box<dyn VecEnv>,
    /// Envs drawn (1 or the whole batch).
    pub shown: usize,
    actions: Vec<f32>,
    /// The keyboard's map for this env.
    pub keys: KeyMap,
    /// The policy and the env id it was trained on.
    agent: Option<(Box<dyn Agent + Send>, String)>,
    /// Who drives now.
    pub driver: Driver,
    /// No steps unless single-stepped.
    pub paused: bool,
    step_once: bool,
    /// Speed multiplier (real time = 1; headless: env steps per frame).
    pub speed: f32,
    accumulated: f32,
    /// Seconds per env step (`None`: turn-based, it waits for actions).
    pub step_seconds: Option<f32>,
    /// Env steps taken since the viewer started.
    pub steps: u64,
    /// Return and length of each env's current episode.
    pub running: Vec<(f64, u64)>,
    /// Envs whose episode ended at the last step (their next step resets them).
    ended: Vec<bool>,
    /// Finished episodes, oldest first.
    pub episodes: Vec<Episode>,
    /// A notice for the overlay (errors included).
    pub notice: Option<String>,
    /// The instruction being typed, while its line is open (`entry.rs`).
    pub line: Option<String>,
    /// The scenes of the shown envs, refreshed after every step.
    pub scenes: Vec<Scene>,
}

/// The simulation behind a lock, shareable between bevy systems (the env is `Send`, not `Sync`).
pub struct SimRes(pub Mutex<Sim>);

impl SimRes {
    /// Locks the simulation (a poisoned lock still holds a usable state).
    pub fn get(&self) -> std::sync::MutexGuard<'_, Sim> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// `n` envs of `id` under `config`, observed as `obs`, stepped by the viewer.
pub(crate) fn make(
    id: &str,
    config: &Value,
    obs: &ObsOptions,
    n: usize,
) -> Result<Box<dyn VecEnv>, ViewerError> {
    let options = VecOptions {
        autoreset: AutoresetMode::NextStep,
        threads: Some(1),
        ..VecOptions::default()
    };
    Ok(proprio::make_vec_observed(id, n, config, options, obs)?)
}

impl Sim {
    /// `num_envs` envs of `ids[current]`, reset with `seed`.
    pub fn new(
        ids: Vec<&'static str>,
        current: usize,
        config: Value,
        obs: ObsOptions,
        seed: u64,
        num_envs: usize,
        agent: Option<(Box<dyn Agent + Send>, String)>,
    ) -> Result<Self, ViewerError> {
        let venv = make(ids[current], &config, &obs, num_envs)?;
        let spec = venv.spec().clone();
        let mut sim = Self {
            ids,
            current,
            config,
            obs,
            seed,
            shown: num_envs,
            actions: vec![0.0; num_envs * spec.action_space.flat_dim()],
            keys: KeyMap::new(&spec, &teleop(&spec)),
            driver: if agent.is_some() {
                Driver::Agent
            } else {
                Driver::Keyboard
            },
            agent,
            venv,
            paused: false,
            step_once: false,
            speed: 1.0,
            accumulated: 0.0,
            step_seconds: None,
            steps: 0,
            running: vec![(0.0, 0); num_envs],
            ended: vec![false; num_envs],
            episodes: Vec::new(),
            notice: None,
            line: None,
            scenes: vec![Scene::default(); num_envs],
        };
        sim.reset()?;
        Ok(sim)
    }

    /// The current env's id.
    pub fn id(&self) -> &'static str {
        self.ids[self.current]
    }

    /// True if a policy is loaded for the current env.
    pub fn has_agent(&self) -> bool {
        self.agent.as_ref().is_some_and(|(_, id)| id == self.id())
    }

    /// Resets every env with the seed and clears the episode counters.
    pub fn reset(&mut self) -> Result<(), ViewerError> {
        self.venv
            .reset(Some(self.seed), None)
            .map_err(ViewerError::Env)?;
        self.running.fill((0.0, 0));
        self.ended.fill(false);
        self.keys.clear_typed();
        self.refresh()
    }

    /// Switches to the env `step` places along the registry (the picker);
    /// the default config is used and a policy stays with its own env.
    pub fn switch(&mut self, step: isize) -> Result<(), ViewerError> {
        let n = self.ids.len() as isize;
        self.current = (self.current as isize + step).rem_euclid(n) as usize;
        self.config = Value::Null;
        self.obs = ObsOptions::default();
        let count = self.venv.num_envs();
        self.venv = make(self.id(), &self.config, &self.obs, count)?;
        let spec = self.venv.spec().clone();
        self.actions = vec![0.0; count * spec.action_space.flat_dim()];
        self.keys = KeyMap::new(&spec, &teleop(&spec));
        self.driver = if self.has_agent() {
            Driver::Agent
        } else {
            Driver::Keyboard
        };
        self.episodes.clear();
        self.steps = 0;
        self.reset()
    }

    /// Redraws the shown envs' scenes.
    pub fn refresh(&mut self) -> Result<(), ViewerError> {
        let shown = self.shown.min(self.venv.num_envs());
        self.scenes.resize_with(shown, Scene::default);
        for (i, scene) in self.scenes.iter_mut().enumerate() {
            self.venv.scene(i, scene).map_err(ViewerError::Env)?;
        }
        self.step_seconds = self.scenes.first().and_then(|s| s.step_seconds);
        Ok(())
    }

    /// Env steps to take this frame: `frame_seconds` of real time at the
    /// current speed, or exactly `speed` steps per frame when `fixed`.
    fn due(&mut self, frame_seconds: f32, fixed: bool) -> u32 {
        if std::mem::take(&mut self.step_once) {
            return 1;
        }
        if self.paused {
            return 0;
        }
        if fixed {
            return self.speed.round().max(1.0) as u32;
        }
        let rate = match self.step_seconds {
            Some(dt) => 1.0 / dt,
            None if self.driver == Driver::Agent => TURNS_PER_SECOND,
            None => return 1,
        };
        self.accumulated += frame_seconds * rate * self.speed;
        let steps = self.accumulated.floor().min(64.0);
        self.accumulated = (self.accumulated - steps).min(1.0);
        steps as u32
    }

    /// Chooses the actions of every env; `false` if nothing is ready to send
    /// (tokens still being typed).
    fn choose(&mut self, keys: &ButtonInput<KeyCode>) -> bool {
        if self.driver == Driver::Agent && self.has_agent() {
            let obs = &self.venv.batch().obs;
            let (agent, _) = self.agent.as_mut().expect("has_agent checked it");
            match agent.act(obs, &mut self.actions, ActMode::Deterministic) {
                Ok(()) => return true,
                Err(e) => {
                    self.notice = Some(format!("policy failed ({e}); keyboard drives"));
                    self.driver = Driver::Keyboard;
                }
            }
        }
        let dim = self.actions.len() / self.venv.num_envs();
        for row in self.actions.chunks_exact_mut(dim.max(1)) {
            self.keys.write(keys, row);
        }
        true
    }

    /// Takes one env step and books rewards and finished episodes.
    fn step(&mut self, keys: &ButtonInput<KeyCode>) -> Result<(), ViewerError> {
        if !self.choose(keys) {
            return Ok(());
        }
        self.venv.step(&self.actions).map_err(ViewerError::Env)?;
        self.keys.clear_typed();
        self.steps += 1;
        let batch = self.venv.batch();
        for (i, run) in self.running.iter_mut().enumerate() {
            // Next-step autoreset: the step after an episode ended only reset the env.
            if std::mem::take(&mut self.ended[i]) {
                continue;
            }
            run.0 += f64::from(batch.reward[i]);
            run.1 += 1;
            if batch.done(i) {
                let success = batch.infos[i].get("success").map(|s| s > 0.5);
                self.episodes.push(Episode {
                    env: i,
                    ret: run.0,
                    steps: run.1,
                    success,
                });
                *run = (0.0, 0);
                self.ended[i] = true;
            }
        }
        Ok(())
    }

    /// Advances by the steps due this frame; errors pause the viewer with a notice.
    pub fn advance(&mut self, keys: &ButtonInput<KeyCode>, frame_seconds: f32, fixed: bool) {
        let typed_ready = self.keys.read(keys);
        if self.driver == Driver::Agent && self.keys.touched(keys) {
            self.driver = Driver::Keyboard;
            self.notice = Some("keyboard took over (Tab hands back)".into());
        }
        let mut due = self.due(frame_seconds, fixed);
        if self.driver == Driver::Keyboard && self.step_seconds.is_none() {
            due = u32::from(typed_ready && !self.paused);
        }
        for _ in 0..due {
            if let Err(e) = self.step(keys) {
                self.paused = true;
                self.notice = Some(format!("paused: {e}"));
                break;
            }
        }
        if due > 0
            && let Err(e) = self.refresh()
        {
            self.notice = Some(format!("cannot draw: {e}"));
        }
    }

    /// Handles the viewer's own keys (pause, step, reset, speed, driver, picker, grid).
    pub fn control(&mut self, keys: &ButtonInput<KeyCode>) {
        if keys.just_pressed(KeyCode::Space) {
            self.paused = !self.paused;
        }
        if keys.just_pressed(KeyCode::Period) {
            self.paused = true;
            self.step_once = true;
        }
        if keys.just_pressed(KeyCode::Equal) {
            self.speed = (self.speed * 2.0).min(64.0);
        }
        if keys.just_pressed(KeyCode::Minus) {
            self.speed = (self.speed / 2.0).max(1.0 / 16.0);
        }
        if keys.just_pressed(KeyCode::Tab) && self.has_agent() {
            self.driver = match self.driver {
                Driver::Agent => Driver::Keyboard,
                Driver::Keyboard => Driver::Agent,
            };
            self.notice = None;
        }
        if keys.just_pressed(KeyCode::KeyG) {
            self.shown = if self.shown == 1 {
                self.venv.num_envs()
            } else {
                1
            };
        }
        let outcome = if keys.just_pressed(KeyCode::KeyR) {
            Some(self.reset())
        } else if keys.just_pressed(KeyCode::BracketRight) {
            Some(self.switch(1))
        } else if keys.just_pressed(KeyCode::BracketLeft) {
            Some(self.switch(-1))
        } else if keys.just_pressed(KeyCode::KeyG) {
            Some(self.refresh())
        } else {
            None
        };
        if let Some(Err(e)) = outcome {
            self.paused = true;
            self.notice = Some(format!("paused: {e}"));
        }
    }
}

/// What the keys do for envs of `spec`, as the registry says (plain "action k" keys if it cannot).
fn teleop(spec: &proprio_core::EnvSpec) -> proprio_core::Teleop {
    proprio::registry().teleop(spec).unwrap_or_default()
}
