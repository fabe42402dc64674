//! [`FrameSource`]: the renderer and the scenes of one env stack, shared by
//! every wrapper that needs its pictures (pixel observations, reward models).
//! Each env's scene is collected once after it moves, and each (camera, size,
//! depth) is rendered once per state, whoever asks first.

use crate::{Frames, RenderConfig, RenderError, Renderer};
use proprio_core::Scene;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// How much a source has done: what a test or a cost report counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderCounts {
    /// Env scenes collected.
    pub scenes: u64,
    /// Render calls (one per camera, size and batch of envs).
    pub renders: u64,
    /// Images rendered.
    pub images: u64,
}

/// One camera at one size, rendered for the envs' current states.
struct Rendered {
    camera: String,
    size: u32,
    depth: bool,
    /// Row `i` is env `i`'s image, valid where `fresh[i]`.
    frames: Frames,
    fresh: Vec<bool>,
}

/// Everything a [`FrameSource`] shares between its clients.
#[derive(Default)]
struct Source {
    renderers: Vec<Renderer>,
    scenes: Vec<Scene>,
    collected: Vec<bool>,
    views: Vec<Rendered>,
    /// What the missing rows are rendered into before they are cached.
    scratch: Frames,
    missing: Vec<usize>,
    counts: RenderCounts,
    /// Whether the innermost wrapper has attached (it reports the envs' moves).
    attached: bool,
}

impl Source {
    /// The index of the renderer for `size`-pixel images, made on first use.
    fn renderer(&mut self, size: u32) -> Result<usize, RenderError> {
        if let Some(k) = self.renderers.iter().position(|r| r.config().width == size) {
            return Ok(k);
        }
        self.renderers.push(Renderer::new(RenderConfig {
            width: size,
            height: size,
            floor: true,
        })?);
        Ok(self.renderers.len() - 1)
    }
}

/// A handle on a shared source of frames (cheap to clone).
#[derive(Clone, Default)]
pub struct FrameSource(Arc<Mutex<Source>>);

/// One wrapper's use of a [`FrameSource`]; the first wrapper attached (the
/// innermost, as stacks are built from the inside out) reports when envs move.
#[derive(Clone)]
pub struct FrameClient {
    source: FrameSource,
    reports_moves: bool,
}

impl FrameSource {
    /// A source with nothing rendered yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Source> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A client for a wrapper built on top of those already attached, which
    /// will ask for images `size` pixels a side (its renderer is made now, so
    /// a machine without an adapter fails here, not at the first step).
    pub fn attach(&self, size: u32) -> Result<FrameClient, RenderError> {
        let mut source = self.lock();
        source.renderer(size)?;
        let reports_moves = !source.attached;
        source.attached = true;
        Ok(FrameClient {
            source: self.clone(),
            reports_moves,
        })
    }

    /// What has been collected and rendered so far.
    pub fn counts(&self) -> RenderCounts {
        self.lock().counts
    }
}

/// Describes the envs listed into their slots of a scene list (an env stack's `VecEnv::scenes`).
pub type DescribeScenes<'a> = dyn Fn(&[usize], &mut [Scene]) -> proprio_core::Result<()> + 'a;

impl FrameClient {
    /// Envs `envs` moved (stepped, reset, restored): their scenes and images
    /// are stale. Only the innermost client's report counts; outer clients
    /// see the same moves after it has rendered them.
    pub fn moved(&self, envs: impl IntoIterator<Item = usize>) {
        if !self.reports_moves {
            return;
        }
        let mut source = self.source.lock();
        let Source {
            collected, views, ..
        } = &mut *source;
        for i in envs {
            if let Some(c) = collected.get_mut(i) {
                *c = false;
            }
            for view in views.iter_mut() {
                if let Some(f) = view.fresh.get_mut(i) {
                    *f = false;
                }
            }
        }
    }

    /// Writes the images of `envs` (in that order) through `camera`, `size`
    /// pixels a side (and depth when `depth`), into `out`, rendering only the
    /// envs not rendered so far since they moved (`envs` lists each env at
    /// most once). `scenes` describes the envs it lists into their slots of
    /// the scene list (the env stack's own `scenes`, one call per batch);
    /// `num_envs` is the stack's size.
    #[allow(clippy::too_many_arguments)]
    pub fn frames(
        &self,
        num_envs: usize,
        envs: &[usize],
        camera: &str,
        size: u32,
        depth: bool,
        scenes: &DescribeScenes,
        out: &mut Frames,
    ) -> proprio_core::Result<()> {
        let mut guard = self.source.lock();
        let source = &mut *guard;
        if source.scenes.len() != num_envs {
            source.scenes = vec![Scene::default(); num_envs];
            source.collected = vec![false; num_envs];
            source.views.clear();
        }
        let slot = match source
            .views
            .iter()
            .position(|v| v.camera == camera && v.size == size && v.depth == depth)
        {
            Some(slot) => slot,
            None => {
                let mut frames = Frames::default();
                frames.resize(num_envs, size, size, depth);
                source.views.push(Rendered {
                    camera: camera.into(),
                    size,
                    depth,
                    frames,
                    fresh: vec![false; num_envs],
                });
                source.views.len() - 1
            }
        };
        source.missing.clear();
        for &i in envs {
            if i >= num_envs {
                return Err(RenderError::Env {
                    env: i,
                    count: num_envs,
                }
                .into());
            }
            if !source.views[slot].fresh[i] {
                source.missing.push(i);
            }
        }
        if !source.missing.is_empty() {
            let stale: Vec<usize> = source
                .missing
                .iter()
                .copied()
                .filter(|&i| !source.collected[i])
                .collect();
            scenes(&stale, &mut source.scenes)?;
            for &i in &stale {
                source.collected[i] = true;
            }
            source.counts.scenes += stale.len() as u64;
            let renderer = source.renderer(size)?;
            let Source {
                renderers,
                scenes,
                views,
                scratch,
                missing,
                counts,
                ..
            } = source;
            renderers[renderer].render_envs(
                scenes,
                missing.iter().copied(),
                camera,
                depth,
                scratch,
            )?;
            counts.renders += 1;
            counts.images += missing.len() as u64;
            let view = &mut views[slot];
            let (rgb, plane) = (view.frames.pixels() * 3, view.frames.pixels());
            for (k, &i) in missing.iter().enumerate() {
                view.frames.rgb[i * rgb..(i + 1) * rgb].copy_from_slice(scratch.rgb(k));
                if depth {
                    view.frames.depth[i * plane..(i + 1) * plane].copy_from_slice(scratch.depth(k));
                }
                view.fresh[i] = true;
            }
        }
        let view = &source.views[slot];
        out.resize(envs.len(), size, size, depth);
        let (rgb, plane) = (view.frames.pixels() * 3, view.frames.pixels());
        for (k, &i) in envs.iter().enumerate() {
            out.rgb[k * rgb..(k + 1) * rgb].copy_from_slice(view.frames.rgb(i));
            if depth {
                out.depth[k * plane..(k + 1) * plane].copy_from_slice(view.frames.depth(i));
            }
        }
        Ok(())
    }
}
