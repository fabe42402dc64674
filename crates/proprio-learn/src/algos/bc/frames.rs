//! Episodes as the frames a reward model reads: a pixel demonstrations
//! file's kept episodes, and episodes of the same env stack played by
//! random actions, by the scripted expert under heavy action noise or on
//! its way to another episode's goal (their
//! failures are what a progress model learns reads as none, and what it is
//! judged against).

use super::demos::{DEMO_ENVS, Demonstrations, StateAgent, perturb};
use crate::base::error::{LearnError, Result};
use crate::base::seeds::learner_rng;
use crate::env::{EnvSource, base};
use crate::nets::encoder::ObsLayout;
use proprio::rand::RngExt;
use proprio::{AutoresetMode, Space, VecOptions};
use proprio_reward::clip::ClipTokenizer;

/// Where an observation row's frames and instruction lie.
struct FrameLayout {
    /// Offset of the image, `[side, side, 3 · views]`.
    at: usize,
    side: usize,
    views: usize,
    /// `(offset, length)` of the instruction's tokens and the tokenizer
    /// that reads them back (built once), if the env has an instruction.
    tokens: Option<(usize, usize, ClipTokenizer)>,
}

impl FrameLayout {
    fn new(source: &EnvSource) -> Result<Self> {
        let layout = ObsLayout::new(&source.observation_space()?)?;
        let columns = layout.pixel_columns();
        let (side, _) = layout.image_size();
        let [image] = columns.as_slice() else {
            return Err(LearnError::Config(format!(
                "frames come from one image per observation (--obs rgb or rgb+state, no frame stack); {} has {}",
                source.id,
                columns.len()
            )));
        };
        let channels = image.len() / (side * side).max(1);
        if source.obs.mode == proprio::render::ObsMode::Depth || channels % 3 != 0 {
            return Err(LearnError::Config(
                "frames are RGB images (--obs rgb or rgb+state)".into(),
            ));
        }
        Ok(Self {
            at: image.start,
            side,
            views: channels / 3,
            tokens: layout
                .tokens()
                .first()
                .map(|&(at, len)| (at, len, ClipTokenizer::openai(77))),
        })
    }

    /// Row `obs`'s views, one `[side, side, 3]` RGB frame after another, appended to `out`.
    fn push_views(&self, obs: &[f32], out: &mut Vec<u8>) {
        let (side, c) = (self.side, 3 * self.views);
        for v in 0..self.views {
            for pixel in 0..side * side {
                let at = self.at + pixel * c + 3 * v;
                out.extend(obs[at..at + 3].iter().map(|&x| x.clamp(0.0, 255.0) as u8));
            }
        }
    }

    /// The instruction row `obs` carries, decoded from its CLIP tokens.
    fn instruction(&self, obs: &[f32]) -> Option<String> {
        let (at, len, tokenizer) = self.tokens.as_ref()?;
        let ids: Vec<u32> = obs[*at..at + len].iter().map(|&t| t as u32).collect();
        tokenizer.decode(&ids)
    }
}

/// One episode's frames.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EpisodeFrames {
    /// `[steps × views × side × side × 3]` RGB bytes, the frame before each action.
    pub pixels: Vec<u8>,
    /// Steps (observations) in it.
    pub steps: usize,
    /// Its instruction, for an env that gives one.
    pub instruction: Option<String>,
    /// Whether the env counted it a success.
    pub success: bool,
}

/// Episodes of frames of one size and number of views.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameEpisodes {
    /// Side of the square frames, pixels.
    pub side: usize,
    /// Cameras per step.
    pub views: usize,
    /// The episodes.
    pub episodes: Vec<EpisodeFrames>,
}

impl FrameEpisodes {
    /// Bytes of one step's views.
    pub fn step_bytes(&self) -> usize {
        self.views * self.side * self.side * 3
    }
}

/// The kept (successful) episodes of a demonstrations file recorded with images.
pub fn demo_frames(demos: &Demonstrations) -> Result<FrameEpisodes> {
    let layout = FrameLayout::new(&demos.header.env)?;
    let d = demos.header.obs_dim;
    let Some(episodes) = demos.episodes() else {
        return Err(LearnError::Config(
            "this demonstrations file predates recorded episodes; record it again with `proprio demos`".into(),
        ));
    };
    let episodes = episodes
        .map(|rows| {
            let (mut pixels, mut row) = (Vec::new(), vec![0.0; d]);
            for r in rows.clone() {
                demos.obs.row_into(r, &mut row);
                layout.push_views(&row, &mut pixels);
            }
            demos.obs.row_into(rows.start, &mut row);
            EpisodeFrames {
                pixels,
                steps: rows.len(),
                instruction: layout.instruction(&row),
                success: true,
            }
        })
        .collect();
    Ok(FrameEpisodes {
        side: layout.side,
        views: layout.views,
        episodes,
    })
}

/// How the envs act in [`rollout_frames`].
pub enum Player {
    /// Uniform random actions in the action box.
    Random,
    /// The scripted expert, its actions plus Gaussian noise of this standard
    /// deviation (action units): near-misses as well as successes.
    NoisyExpert(f32),
    /// A policy trained on the env's state (e.g. on a first progress
    /// model's reward): the states it drifts into, and what they truly are.
    Policy(Box<dyn proprio::Agent>),
    /// The scripted expert's moves in another episode of the same stack
    /// (its goal elsewhere), replayed here, then zero actions (holding, for
    /// delta controllers) once that episode ends: an expert's way to the
    /// wrong place, so that the arm's pose alone cannot read as progress.
    Decoy,
}

/// The episodes a [`Player::Decoy`] takes its moves from: the expert plays
/// them, env `i` of this stack guiding env `i` of the recorded one.
struct Guide {
    venv: Box<dyn proprio::VecEnv>,
    expert: StateAgent,
    /// Per env, whether its guide's episode has ended (the recorded env holds).
    held: Vec<bool>,
}

impl Guide {
    fn new(source: &EnvSource, options: VecOptions, seed: u64) -> Result<Self> {
        let (mut venv, _) = base(source, DEMO_ENVS, options)?;
        let expert = StateAgent::expert(source, venv.spec())?;
        // Another stream of episodes: the same start, the goals elsewhere.
        venv.reset(Some(seed ^ 0x00de_c0de), None)?;
        Ok(Self {
            venv,
            expert,
            held: vec![false; DEMO_ENVS],
        })
    }

    /// The expert's moves in the guides (stepped with them), zero where a guide has ended.
    fn moves(&mut self, actions: &mut [f32]) -> Result<()> {
        self.expert.act(&self.venv.batch().obs, actions)?;
        self.venv.step(actions)?;
        let a = actions.len() / DEMO_ENVS;
        let ended: Vec<bool> = (0..DEMO_ENVS).map(|i| self.venv.batch().done(i)).collect();
        for (i, moves) in actions.chunks_exact_mut(a).enumerate() {
            if self.held[i] {
                moves.fill(0.0);
            }
            self.held[i] |= ended[i];
        }
        if ended.contains(&true) {
            self.venv.reset_envs(&ended, None)?;
        }
        Ok(())
    }

    /// Recorded envs `finished` start again beside fresh guides.
    fn restart(&mut self, finished: &[bool]) -> Result<()> {
        for (held, &f) in self.held.iter_mut().zip(finished) {
            *held &= !f;
        }
        self.venv.reset_envs(finished, None)?;
        Ok(())
    }
}

/// The first `episodes` episodes to start in `source`'s env stack (which
/// renders the frames), played by `player` from env streams of `seed`,
/// successful or not, in the order they finish.
pub fn rollout_frames(
    source: &EnvSource,
    episodes: usize,
    player: Player,
    seed: u64,
) -> Result<FrameEpisodes> {
    let layout = FrameLayout::new(source)?;
    let options = VecOptions {
        autoreset: AutoresetMode::Disabled,
        threads: None,
        backend: source.backend,
    };
    let (mut venv, _) = base(source, DEMO_ENVS, options)?;
    let action_space = venv.spec().action_space.clone();
    let Space::Box { low, high } = &action_space else {
        return Err(LearnError::Config(
            "frame rollouts need a box action space".into(),
        ));
    };
    let mut guide = None;
    let (mut agent, noise) = match player {
        Player::Random => (None, 0.0),
        Player::NoisyExpert(noise) => (Some(StateAgent::expert(source, venv.spec())?), noise),
        Player::Policy(policy) => (Some(StateAgent::new(policy, source, venv.spec())?), 0.0),
        Player::Decoy => {
            guide = Some(Guide::new(source, options, seed)?);
            (None, 0.0)
        }
    };
    let (n, d, a) = (
        DEMO_ENVS,
        venv.spec().observation_space.flat_dim(),
        low.len(),
    );
    let mut rng = learner_rng(seed);
    let mut actions = vec![0.0f32; n * a];
    let mut running = vec![EpisodeFrames::default(); n];
    let mut done = Vec::new();
    // The first `episodes` episodes to start, not the first to finish: a
    // failure runs to the time limit, so those are mostly successes.
    let mut recording: Vec<bool> = (0..n).map(|i| i < episodes).collect();
    let mut started = n.min(episodes);
    venv.reset(Some(seed), None)?;
    while done.len() < episodes {
        let obs = &venv.batch().obs;
        match (&mut agent, &mut guide) {
            (_, Some(guide)) => guide.moves(&mut actions)?,
            (Some(agent), None) => {
                agent.act(obs, &mut actions)?;
                if noise > 0.0 {
                    perturb(&mut actions, noise, low, high, &mut rng);
                }
            }
            (None, None) => {
                for (k, y) in actions.iter_mut().enumerate() {
                    *y = low[k % a] + (high[k % a] - low[k % a]) * rng.random::<f32>();
                }
            }
        }
        for (i, e) in running
            .iter_mut()
            .enumerate()
            .filter(|(i, _)| recording[*i])
        {
            let row = &obs[i * d..(i + 1) * d];
            if e.steps == 0 {
                e.instruction = layout.instruction(row);
            }
            layout.push_views(row, &mut e.pixels);
            e.steps += 1;
        }
        venv.step(&actions)?;
        let b = venv.batch();
        let finished: Vec<bool> = (0..n).map(|i| b.done(i)).collect();
        for i in (0..n).filter(|&i| finished[i]) {
            if recording[i] {
                let mut e = std::mem::take(&mut running[i]);
                e.success = b.infos[i].get("success").unwrap_or(0.0) > 0.0;
                done.push(e);
            }
            recording[i] = started < episodes;
            started += usize::from(recording[i]);
        }
        if finished.contains(&true) {
            venv.reset_envs(&finished, None)?;
            if let Some(guide) = &mut guide {
                guide.restart(&finished)?;
            }
        }
    }
    Ok(FrameEpisodes {
        side: layout.side,
        views: layout.views,
        episodes: done,
    })
}
