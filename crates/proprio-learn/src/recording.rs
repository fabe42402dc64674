//! Recording episodes as a video: a batch of envs, each in its place of a
//! grid, stepped until each has played its episodes; shared by `proprio
//! record` and `proprio train --video-every` (SB3's `VecVideoRecorder`).

use crate::base::error::{LearnError, Result};
use crate::policy::Policy;
use crate::video::{GifVideo, annotate, tile};
use proprio::render::{Frames, RenderConfig, Renderer};
use proprio::{ActMode, Agent, AutoresetMode, Info, Scene, VecEnv, VecOptions};
use proprio_reward::TASK_REWARD;
use std::borrow::Cow;
use std::path::Path;

/// How a recording looks.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordOptions {
    /// Episodes each env plays, one after another.
    pub episodes: usize,
    /// Envs side by side.
    pub columns: usize,
    /// Rows of envs.
    pub rows: usize,
    /// Side of each env's square picture, pixels.
    pub image_size: u32,
    /// Camera the video is filmed from (`default`, `top`, or one the env offers).
    pub camera: String,
    /// Frames per second of the video.
    pub fps: f64,
    /// Steps recorded of an episode at most (the rest of a longer one is cut).
    pub max_steps: usize,
    /// Seed of the episodes.
    pub seed: u64,
    /// Replace an existing file.
    pub overwrite: bool,
    /// Write step, reward and success on each picture (off: the bare frames,
    /// e.g. a demonstration for a RoboCLIP reward).
    pub overlay: bool,
}

impl RecordOptions {
    /// Envs in the grid.
    pub fn num_envs(&self) -> usize {
        self.columns * self.rows
    }

    /// The autoreset mode (disabled: the recorder resets each env itself) and
    /// one worker thread, for the envs of a recording.
    pub fn vec_options() -> VecOptions {
        VecOptions {
            autoreset: AutoresetMode::Disabled,
            threads: Some(1),
            ..VecOptions::default()
        }
    }
}

/// One env's place in the grid: its episode counters and, once its episodes
/// are over, its last picture.
#[derive(Default)]
struct Cell {
    episode: usize,
    step: usize,
    reward: f32,
    episode_return: f64,
    /// The task's own reward and return, where a reward model pays the policy instead.
    task: Option<(f32, f64)>,
    success: Option<bool>,
    still: Option<Vec<u8>>,
}

impl Cell {
    /// Counts a step that paid `reward` and reported `info`.
    fn observe(&mut self, reward: f32, info: &Info) {
        self.step += 1;
        self.reward = reward;
        self.episode_return += f64::from(reward);
        if let Some(task) = info.get(TASK_REWARD) {
            let (_, task_return) = self.task.unwrap_or_default();
            self.task = Some((task as f32, task_return + task));
        }
        self.success = info.get("success").map(|s| s > 0.0);
    }

    /// The counters written on the picture, of `episodes` episodes in all.
    fn lines(&self, episodes: usize) -> Vec<String> {
        let mut lines = vec![
            format!(
                "ep {}/{episodes} step {}",
                (self.episode + 1).min(episodes),
                self.step
            ),
            format!("r {:+.2} R {:.1}", self.reward, self.episode_return),
        ];
        if let Some((reward, episode_return)) = self.task {
            lines.push(format!("task r {reward:+.2} R {episode_return:.1}"));
        }
        if let Some(success) = self.success {
            lines.push(if success { "success" } else { "no success yet" }.into());
        }
        lines
    }
}

/// Records `options.episodes` episodes of every env of `venv` (built with
/// [`RecordOptions::vec_options`]) into the GIF `out`, `agent` choosing the
/// actions (deterministically); returns the frames written.
pub fn record(
    venv: &mut dyn VecEnv,
    agent: &mut dyn Agent,
    options: &RecordOptions,
    out: &Path,
) -> Result<usize> {
    let n = venv.num_envs();
    if options.episodes == 0 || options.max_steps == 0 || n != options.num_envs() {
        return Err(LearnError::Config(format!(
            "a recording needs at least one episode and step, and {} envs (got {n})",
            options.num_envs()
        )));
    }
    let size = options.image_size;
    let renderer = Renderer::new(RenderConfig {
        width: size,
        height: size,
        floor: true,
    })
    .map_err(|e| LearnError::Device(e.to_string()))?;
    let (width, height) = (options.columns as u32 * size, options.rows as u32 * size);
    let video = GifVideo::create(out, width, height, options.fps, options.overwrite)?;
    let mut recorder = Recorder {
        renderer,
        scenes: vec![Scene::default(); n],
        frames: Frames::default(),
        picture: Vec::new(),
        options,
        video,
    };
    let mut actions = vec![0.0; n * venv.spec().action_space.flat_dim()];
    let mut cells: Vec<Cell> = (0..n).map(|_| Cell::default()).collect();
    let mut finished = vec![false; n];
    venv.reset(Some(options.seed), None)?;
    recorder.push(venv, &cells)?;
    while cells.iter().any(|c| c.still.is_none()) {
        agent.act(&venv.batch().obs, &mut actions, ActMode::Deterministic)?;
        venv.step(&actions)?;
        let batch = venv.batch();
        for (i, cell) in cells.iter_mut().enumerate() {
            cell.observe(batch.reward[i], &batch.infos[i]);
            finished[i] = batch.done(i) || cell.step >= options.max_steps;
        }
        recorder.push(venv, &cells)?;
        for (i, cell) in cells.iter_mut().enumerate() {
            if finished[i] && cell.still.is_none() {
                cell.episode += 1;
                if cell.episode == options.episodes {
                    cell.still = Some(recorder.cell(i, cell)?);
                } else {
                    *cell = Cell {
                        episode: cell.episode,
                        ..Cell::default()
                    };
                }
            }
        }
        if finished.contains(&true) {
            venv.reset_envs(&finished, None)?;
        }
    }
    Ok(recorder.video.frames())
}

/// Records a trained policy acting deterministically on the envs it was
/// trained on, observing what it observed and paid what it was paid in
/// training (a reward model's reward, with the task's written beside it).
pub fn record_policy(policy: &mut Policy, options: &RecordOptions, out: &Path) -> Result<usize> {
    let env = policy.env().clone();
    let vec_options = VecOptions {
        backend: env.backend,
        ..RecordOptions::vec_options()
    };
    let (mut venv, _) = crate::env::base(&env, options.num_envs(), vec_options)?;
    record(venv.as_mut(), policy, options, out)
}

/// Renders the batch and appends one grid frame to the video.
struct Recorder<'a> {
    renderer: Renderer,
    scenes: Vec<Scene>,
    frames: Frames,
    picture: Vec<u8>,
    options: &'a RecordOptions,
    video: GifVideo,
}

impl Recorder<'_> {
    fn push(&mut self, venv: &dyn VecEnv, cells: &[Cell]) -> Result<()> {
        for (i, scene) in self.scenes.iter_mut().enumerate() {
            venv.scene(i, scene)?;
        }
        self.renderer
            .render(&self.scenes, &self.options.camera, false, &mut self.frames)
            .map_err(|e| LearnError::Device(e.to_string()))?;
        let pictures = cells
            .iter()
            .enumerate()
            .map(|(i, cell)| match &cell.still {
                Some(still) => Ok(Cow::Borrowed(still.as_slice())),
                None => self.cell(i, cell).map(Cow::Owned),
            })
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&[u8]> = pictures.iter().map(|p| p.as_ref()).collect();
        let size = self.frames.width as usize;
        tile(&refs, size, size, self.options.columns, &mut self.picture);
        self.video.push(&self.picture)
    }

    /// Env `i`'s current picture with its counters written on it.
    fn cell(&self, i: usize, cell: &Cell) -> Result<Vec<u8>> {
        let mut picture = self.frames.rgb(i).to_vec();
        if !self.options.overlay {
            return Ok(picture);
        }
        let mut lines = cell.lines(self.options.episodes);
        // What the env says about itself: an instruction, a puzzle's question.
        lines.extend(self.scenes[i].text.iter().cloned());
        let (w, h) = (self.frames.width, self.frames.height);
        annotate(&mut picture, w, h, &lines)?;
        Ok(picture)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reward_models_run_shows_what_it_was_paid_and_the_tasks_reward_beside_it() {
        let mut cell = Cell::default();
        let mut info = Info::default();
        info.set("success", 0.0);
        cell.observe(0.5, &info);
        assert_eq!(
            cell.lines(1),
            ["ep 1/1 step 1", "r +0.50 R 0.5", "no success yet"]
        );
        // Under a reward model the task's reward comes as an info; both add up.
        let mut paid = Cell::default();
        info.set(TASK_REWARD, -1.0);
        paid.observe(-0.25, &info);
        info.set(TASK_REWARD, -0.5);
        info.set("success", 1.0);
        paid.observe(-0.5, &info);
        let lines = paid.lines(2);
        assert_eq!(lines[1], "r -0.50 R -0.8");
        assert_eq!(lines[2], "task r -0.50 R -1.5");
        assert_eq!(lines[3], "success");
    }
}
