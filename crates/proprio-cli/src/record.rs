//! `proprio record`: an animated GIF of episodes — a trained policy, the env's
//! scripted controller or random actions — with step, reward and success
//! written on each env's picture, several envs side by side with `--grid`.

use crate::{CliResult, Failure, input};
use clap::Args;
use proprio::render::{Frames, RenderConfig, Renderer};
use proprio::{AutoresetMode, Controller, RandomActions, Scene, Space, VecEnv, VecOptions};
use proprio_learn::Policy;
use proprio_learn::video::{GifVideo, annotate, tile};
use std::borrow::Cow;
use std::path::PathBuf;

#[derive(Args)]
pub struct RecordArgs {
    /// Environment id (with --checkpoint, the run's env is recorded).
    #[arg(long, required_unless_present = "checkpoint")]
    env: Option<String>,
    /// Env config as inline JSON or a JSON file.
    #[arg(long)]
    config: Option<String>,
    /// Run directory written by `proprio train`: its policy acts (deterministically).
    #[arg(long, conflicts_with_all = ["policy", "random", "env", "config"])]
    checkpoint: Option<PathBuf>,
    /// The env's scripted controller acts.
    #[arg(long, value_parser = ["scripted"], conflicts_with = "random")]
    policy: Option<String>,
    /// Uniformly random actions.
    #[arg(long)]
    random: bool,
    /// Episodes per env of the grid, one after another.
    #[arg(long, default_value_t = 1)]
    episodes: usize,
    /// Envs side by side, COLUMNSxROWS (each its own episodes).
    #[arg(long, default_value = "1x1")]
    grid: String,
    /// Side of each env's square picture, pixels.
    #[arg(long, default_value_t = 128)]
    image_size: u32,
    /// Camera: default, top, or one the env offers.
    #[arg(long, default_value = "default")]
    camera: String,
    /// Frames per second of the video.
    #[arg(long, default_value_t = 20.0)]
    fps: f64,
    /// Steps recorded of an episode at most (the rest of a longer one is cut).
    #[arg(long, default_value_t = 500)]
    max_steps: usize,
    /// Seed of the episodes.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// GIF to write.
    #[arg(long)]
    out: PathBuf,
    /// Overwrite --out if it exists.
    #[arg(long)]
    force: bool,
}

/// Who picks the actions.
enum Actor {
    Trained(Box<Policy>),
    Scripted(Box<dyn Controller>),
    Random(RandomActions),
}

/// One env's place in the grid: its episode counters and, once its episodes
/// are over, its last picture.
#[derive(Default)]
struct Cell {
    episode: usize,
    step: usize,
    reward: f32,
    episode_return: f64,
    success: Option<bool>,
    still: Option<Vec<u8>>,
}

pub fn run(args: &RecordArgs) -> CliResult {
    let (columns, rows) = grid(&args.grid)?;
    if args.episodes == 0 || args.max_steps == 0 {
        return Err(Failure(
            "--episodes and --max-steps must be at least 1".into(),
        ));
    }
    let n = columns * rows;
    let fail = |e: proprio_learn::LearnError| Failure(e.to_string());
    if args.checkpoint.is_none() && args.policy.is_none() && !args.random {
        return Err(Failure(
            "give --checkpoint RUN, --policy scripted or --random".into(),
        ));
    }
    let (id, config, policy) = match &args.checkpoint {
        Some(run) => {
            let policy = Policy::load(run).map_err(fail)?;
            let env = policy.env().clone();
            (env.id, env.config, Some(policy))
        }
        None => (
            args.env.clone().unwrap_or_default(),
            input::config(args.config.as_deref())?,
            None,
        ),
    };
    let options = VecOptions {
        autoreset: AutoresetMode::Disabled,
        ..VecOptions::default()
    };
    let mut venv = proprio::make_vec(&id, n, &config, options)?;
    let mut actor = match policy {
        Some(policy) => Actor::Trained(Box::new(policy)),
        None if args.random => Actor::Random(RandomActions::new(args.seed, n)),
        None => Actor::Scripted(proprio::registry().controller(&id, venv.spec())?),
    };
    let size = args.image_size;
    let mut renderer = Renderer::new(RenderConfig {
        width: size,
        height: size,
        floor: true,
    })
    .map_err(|e| Failure(e.to_string()))?;
    let (grid_w, grid_h) = (columns as u32 * size, rows as u32 * size);
    let mut video =
        GifVideo::create(&args.out, grid_w, grid_h, args.fps, args.force).map_err(fail)?;
    let space = venv.spec().action_space.clone();
    let mut actions = vec![0.0; n * space.flat_dim()];
    let mut cells: Vec<Cell> = (0..n).map(|_| Cell::default()).collect();
    let mut finished = vec![false; n];
    let mut recorder = Recorder {
        renderer: &mut renderer,
        scenes: vec![Scene::default(); n],
        frames: Frames::default(),
        picture: Vec::new(),
        camera: &args.camera,
        episodes: args.episodes,
    };
    venv.reset(Some(args.seed), None)?;
    recorder.push(venv.as_ref(), &cells, columns, &mut video)?;
    while cells.iter().any(|c| c.still.is_none()) {
        act(&mut actor, venv.as_ref(), &space, &mut actions)?;
        venv.step(&actions)?;
        let batch = venv.batch();
        for (i, cell) in cells.iter_mut().enumerate() {
            cell.step += 1;
            cell.reward = batch.reward[i];
            cell.episode_return += f64::from(batch.reward[i]);
            cell.success = batch.infos[i].get("success").map(|s| s > 0.0);
            finished[i] = batch.done(i) || cell.step >= args.max_steps;
        }
        recorder.push(venv.as_ref(), &cells, columns, &mut video)?;
        for (i, cell) in cells.iter_mut().enumerate() {
            if finished[i] && cell.still.is_none() {
                cell.episode += 1;
                if cell.episode == args.episodes {
                    cell.still = Some(recorder.cell(i, cell)?);
                } else {
                    let still = cell.still.take();
                    *cell = Cell {
                        episode: cell.episode,
                        still,
                        ..Cell::default()
                    };
                }
            }
        }
        if finished.contains(&true) {
            venv.reset_envs(&finished, None)?;
        }
    }
    println!(
        "wrote {} ({} frames, {grid_w}×{grid_h}, {} env{} × {} episode{})",
        args.out.display(),
        video.frames(),
        n,
        if n == 1 { "" } else { "s" },
        args.episodes,
        if args.episodes == 1 { "" } else { "s" },
    );
    Ok(())
}

/// Renders the batch and appends one grid frame to the video.
struct Recorder<'a> {
    renderer: &'a mut Renderer,
    scenes: Vec<Scene>,
    frames: Frames,
    picture: Vec<u8>,
    camera: &'a str,
    episodes: usize,
}

impl Recorder<'_> {
    fn push(
        &mut self,
        venv: &dyn VecEnv,
        cells: &[Cell],
        columns: usize,
        video: &mut GifVideo,
    ) -> CliResult {
        for (i, scene) in self.scenes.iter_mut().enumerate() {
            venv.scene(i, scene)?;
        }
        self.renderer
            .render(&self.scenes, self.camera, false, &mut self.frames)
            .map_err(|e| Failure(e.to_string()))?;
        let pictures = cells
            .iter()
            .enumerate()
            .map(|(i, cell)| match &cell.still {
                Some(still) => Ok(Cow::Borrowed(still.as_slice())),
                None => self.cell(i, cell).map(Cow::Owned),
            })
            .collect::<Result<Vec<_>, Failure>>()?;
        let refs: Vec<&[u8]> = pictures.iter().map(|p| p.as_ref()).collect();
        let size = self.frames.width as usize;
        tile(&refs, size, size, columns, &mut self.picture);
        video
            .push(&self.picture)
            .map_err(|e| Failure(e.to_string()))
    }

    /// Env `i`'s current picture with its counters written on it.
    fn cell(&self, i: usize, cell: &Cell) -> Result<Vec<u8>, Failure> {
        let mut picture = self.frames.rgb(i).to_vec();
        let mut lines = vec![
            format!(
                "ep {}/{} step {}",
                (cell.episode + 1).min(self.episodes),
                self.episodes,
                cell.step
            ),
            format!("r {:+.2} R {:.1}", cell.reward, cell.episode_return),
        ];
        if let Some(success) = cell.success {
            lines.push(if success { "success" } else { "no success yet" }.into());
        }
        let (w, h) = (self.frames.width, self.frames.height);
        annotate(&mut picture, w, h, &lines).map_err(|e| Failure(e.to_string()))?;
        Ok(picture)
    }
}

/// Fills `actions` for the batch's current observations.
fn act(actor: &mut Actor, venv: &dyn VecEnv, space: &Space, actions: &mut [f32]) -> CliResult {
    let obs = &venv.batch().obs;
    match actor {
        Actor::Trained(policy) => {
            policy
                .act_batch(obs, true, actions)
                .map_err(|e| Failure(e.to_string()))?;
            if let Space::Box { low, high } = space {
                for row in actions.chunks_exact_mut(low.len()) {
                    for ((a, lo), hi) in row.iter_mut().zip(low).zip(high) {
                        *a = a.clamp(*lo, *hi);
                    }
                }
            }
        }
        Actor::Scripted(controller) => controller.act(obs, actions),
        Actor::Random(random) => random.sample(space, actions),
    }
    Ok(())
}

/// `COLUMNSxROWS` → (columns, rows), each 1 to 8.
fn grid(text: &str) -> Result<(usize, usize), Failure> {
    let bad = || {
        Failure(format!(
            "--grid {text}: expected COLUMNSxROWS, e.g. 2x2, each 1 to 8"
        ))
    };
    let (c, r) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let (c, r): (usize, usize) = (c.parse().map_err(|_| bad())?, r.parse().map_err(|_| bad())?);
    if !(1..=8).contains(&c) || !(1..=8).contains(&r) {
        return Err(bad());
    }
    Ok((c, r))
}
