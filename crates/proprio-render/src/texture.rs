//! The texture atlas: every distinct texture of a batch in one GPU texture,
//! 32 × 32 texels a cell (larger textures are resampled down, nearest texel),
//! uploaded once and found again by the texture's key.

use crate::RenderError;
use proprio_core::Texture;
use std::collections::HashMap;

/// Texels along a cell's side.
pub const CELL: u32 = 32;
/// Texels along the atlas's side.
pub const ATLAS: u32 = 2048;
/// Cells in the atlas.
pub const CELLS: usize = ((ATLAS / CELL) * (ATLAS / CELL)) as usize;

/// The atlas texture and which texture lives in which cell.
pub struct Atlas {
    texture: wgpu::Texture,
    cells: HashMap<u64, (u32, u32, u32)>,
    scratch: Vec<u8>,
}

impl Atlas {
    /// An empty atlas on `device`.
    pub fn new(device: &wgpu::Device) -> Self {
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("proprio-render atlas"),
            size: wgpu::Extent3d {
                width: ATLAS,
                height: ATLAS,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8UnormSrgb,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        Self {
            texture,
            cells: HashMap::new(),
            scratch: Vec::new(),
        }
    }

    /// A view for the bind group.
    pub fn view(&self) -> wgpu::TextureView {
        self.texture.create_view(&Default::default())
    }

    /// Forgets old textures when a new batch could otherwise run out of cells.
    pub fn begin_batch(&mut self) {
        if self.cells.len() > CELLS / 2 {
            self.cells.clear();
        }
    }

    /// (cell, width, height) of `texture`, uploading it on first use.
    pub fn cell(
        &mut self,
        queue: &wgpu::Queue,
        texture: &Texture,
    ) -> Result<(u32, u32, u32), RenderError> {
        if let Some(&found) = self.cells.get(&texture.key) {
            return Ok(found);
        }
        let cell = self.cells.len();
        if cell >= CELLS {
            return Err(RenderError::Textures { limit: CELLS });
        }
        let (w, h) = (texture.width.min(CELL), texture.height.min(CELL));
        self.scratch.clear();
        for y in 0..h {
            let sy = (y * texture.height / h) as usize;
            for x in 0..w {
                let sx = (x * texture.width / w) as usize;
                let at = (sy * texture.width as usize + sx) * 4;
                self.scratch.extend_from_slice(&texture.rgba[at..at + 4]);
            }
        }
        let per_row = ATLAS / CELL;
        queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture: &self.texture,
                mip_level: 0,
                origin: wgpu::Origin3d {
                    x: (cell as u32 % per_row) * CELL,
                    y: (cell as u32 / per_row) * CELL,
                    z: 0,
                },
                aspect: wgpu::TextureAspect::All,
            },
            &self.scratch,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(w * 4),
                rows_per_image: Some(h),
            },
            wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
        );
        let found = (cell as u32, w, h);
        self.cells.insert(texture.key, found);
        Ok(found)
    }
}
