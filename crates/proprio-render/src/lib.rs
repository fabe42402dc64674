//! # proprio-render
//!
//! Batched offscreen rendering of env scenes: N envs' [`Scene`]s (the form
//! every env describes itself in for the viewer) become N RGB images and, on
//! request, N depth images in metres, in one GPU submission and one read-back.
//! wgpu only (no bevy), so training never compiles the viewer. Runs on any GPU
//! and, without one, on Mesa's lavapipe (Vulkan) or llvmpipe (GL).
//!
//! ```no_run
//! use proprio_core::{Pose, Scene, Shape, Visual};
//! use proprio_render::{Frames, RenderConfig, Renderer};
//! let mut scene = Scene::default();
//! let cube = Shape::Cuboid { half_extents: [0.5; 3] };
//! scene.bodies.push(Visual::new(cube, Pose::at([0.0, 0.0, 0.5]), [1.0, 0.2, 0.2, 1.0]));
//! let mut renderer = Renderer::new(RenderConfig::default()).unwrap();
//! let mut frames = Frames::default();
//! renderer.render(&[scene], "default", true, &mut frames).unwrap();
//! assert_eq!(frames.rgb(0).len(), 64 * 64 * 3);
//! ```
//!
//! Pixel observations for any registered env: `proprio::make_vec_observed`
//! with [`ObsOptions`], which wraps the batch in [`PixelObs`].

mod camera;
mod gpu;
mod mesh;
mod pixels;
mod renderer;
mod source;
mod texture;

pub use camera::{DEFAULT_FOV_Y_DEGREES, FAR, NEAR, View};
pub use pixels::{ObsMode, ObsOptions, PixelObs, inner_autoreset};
pub use renderer::{RenderConfig, Renderer};
pub use source::{FrameClient, FrameSource, RenderCounts};

/// Why rendering failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenderError {
    /// wgpu found no adapter at all.
    #[error(
        "no GPU adapter for rendering ({0}); install Mesa's software drivers \
         (Debian/Ubuntu: apt-get install mesa-vulkan-drivers libvulkan1, or libegl1 \
         libegl-mesa0 libgl1-mesa-dri for GL) or a GPU driver"
    )]
    NoAdapter(String),
    /// The adapter refused the device, the shader or a command.
    #[error("rendering failed on {0}")]
    Device(String),
    /// No camera of that name in a scene.
    #[error("no camera '{camera}' in this env (it has: {available})")]
    UnknownCamera { camera: String, available: String },
    /// The image size is outside what the renderer supports.
    #[error("image size {width}×{height} is outside 8..=4096 pixels a side")]
    Size { width: u32, height: u32 },
    /// More distinct textures in one batch than the atlas holds.
    #[error("one batch shows more than {limit} distinct textures; render fewer envs per call")]
    Textures { limit: usize },
    /// An env index past the scenes given.
    #[error("env {env} asked for, but only {count} scenes were given")]
    Env { env: usize, count: usize },
}

impl From<RenderError> for proprio_core::Error {
    fn from(e: RenderError) -> Self {
        proprio_core::Error::Backend(e.to_string())
    }
}

/// A batch of rendered images, reused between calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frames {
    /// Images in the batch.
    pub count: usize,
    /// Width, pixels.
    pub width: u32,
    /// Height, pixels.
    pub height: u32,
    /// `count × height × width × 3` sRGB bytes, rows top first.
    pub rgb: Vec<u8>,
    /// `count × height × width` distances along each camera's axis, m (0: nothing hit);
    /// empty unless depth was asked for.
    pub depth: Vec<f32>,
}

impl Frames {
    /// Image `i`'s RGB bytes.
    pub fn rgb(&self, i: usize) -> &[u8] {
        let n = self.pixels();
        &self.rgb[i * n * 3..(i + 1) * n * 3]
    }

    /// Image `i`'s depth in metres (empty without depth).
    pub fn depth(&self, i: usize) -> &[f32] {
        let n = self.pixels();
        self.depth.get(i * n..(i + 1) * n).unwrap_or(&[])
    }

    /// Pixels in one image.
    pub fn pixels(&self) -> usize {
        self.width as usize * self.height as usize
    }

    fn resize(&mut self, count: usize, width: u32, height: u32, depth: bool) {
        (self.count, self.width, self.height) = (count, width, height);
        let n = count * self.pixels();
        self.rgb.resize(n * 3, 0);
        self.depth.resize(if depth { n } else { 0 }, 0.0);
    }
}
