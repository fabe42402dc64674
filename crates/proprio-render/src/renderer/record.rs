//! Recording a batch: one render pass per target layer (each env in its
//! tile), the copies of every tile to the read-back buffer, and the read-back.

use super::{Draw, Renderer, SKY};
use crate::gpu::PipelineKey;
use crate::{Frames, RenderError};
use std::sync::mpsc;

impl Renderer {
    /// Records one render pass into target layer `layer`: each of `slots`
    /// (`(layer, slot)` pairs) drawn into its env's tile.
    pub(super) fn draw_layer(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        layer: u32,
        slots: &[(u32, usize)],
        depth: bool,
    ) {
        let layer = layer as usize;
        let targets = &self.targets;
        let clear = |c| wgpu::Operations {
            load: wgpu::LoadOp::Clear(c),
            store: wgpu::StoreOp::Store,
        };
        let attachment = |view, colour| {
            Some(wgpu::RenderPassColorAttachment {
                view,
                depth_slice: None,
                resolve_target: None,
                ops: clear(colour),
            })
        };
        let colour = attachment(&targets.colour_views[layer], SKY);
        let no_hit = wgpu::Color::TRANSPARENT;
        let both = [
            colour.clone(),
            attachment(&targets.depth_views[layer], no_hit),
        ];
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("env"),
            color_attachments: if depth { &both } else { &both[..1] },
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &targets.zbuffer,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Discard,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_bind_group(0, self.bind_group.as_ref(), &[]);
        pass.set_vertex_buffer(0, self.vertices.slice(..));
        pass.set_vertex_buffer(1, self.instances.buffer.slice(..));
        pass.set_index_buffer(self.indices.slice(..), wgpu::IndexFormat::Uint32);
        let (w, h) = (self.config.width, self.config.height);
        let mut pipeline = None;
        for &(_, slot) in slots {
            let (env, from, to) = self.env_draws[slot];
            let (x, y, _) = self.tiling.place(env);
            pass.set_viewport(x as f32, y as f32, w as f32, h as f32, 0.0, 1.0);
            pass.set_scissor_rect(x, y, w, h);
            self.draw_env(&mut pass, &self.draws[from..to], depth, &mut pipeline);
        }
    }

    /// Records the instanced draws of one env (writing depth or not),
    /// switching only when `pipeline` (the one in use) changes.
    fn draw_env(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        draws: &[Draw],
        depth: bool,
        pipeline: &mut Option<usize>,
    ) {
        for draw in draws {
            let wanted = PipelineKey {
                depth,
                translucent: draw.translucent,
                two_sided: draw.two_sided,
            }
            .index();
            if *pipeline != Some(wanted) {
                pass.set_pipeline(&self.pipelines[wanted]);
                *pipeline = Some(wanted);
            }
            let (base_vertex, first_index, index_count) = self.ranges[draw.mesh];
            pass.draw_indexed(
                first_index..first_index + index_count,
                base_vertex,
                draw.first..draw.first + draw.count,
            );
        }
    }

    /// Copies slot `slot`'s tile of `texture` (in target layer `layer`) to the
    /// read-back buffer at `offset`.
    pub(super) fn copy_out(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        texture: &wgpu::Texture,
        slot: usize,
        layer: u32,
        offset: u64,
    ) {
        let (x, y, _) = self.tiling.place(self.env_draws[slot].0);
        encoder.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture,
                mip_level: 0,
                origin: wgpu::Origin3d { x, y, z: layer },
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &self.readback.buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset,
                    bytes_per_row: Some(self.padded_row() as u32),
                    rows_per_image: Some(self.config.height),
                },
            },
            wgpu::Extent3d {
                width: self.config.width,
                height: self.config.height,
                depth_or_array_layers: 1,
            },
        );
    }

    /// Waits for the GPU, then unpacks `size` read-back bytes into `frames`.
    pub(super) fn read_back(&self, size: u64, frames: &mut Frames) -> Result<(), RenderError> {
        let (tx, rx) = mpsc::channel();
        let slice = self.readback.buffer.slice(0..size);
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| RenderError::Device(format!("waiting for the GPU: {e}")))?;
        rx.recv()
            .map_err(|e| RenderError::Device(format!("reading frames: {e}")))?
            .map_err(|e| RenderError::Device(format!("reading frames: {e}")))?;
        {
            let bytes = slice.get_mapped_range();
            let padded = self.padded_row() as usize;
            let (w, h) = (frames.width as usize, frames.height as usize);
            let plane = frames.count * h * padded;
            for (row, out) in frames.rgb.chunks_exact_mut(w * 3).enumerate() {
                let src = &bytes[row * padded..row * padded + w * 4];
                for (px, rgba) in out.chunks_exact_mut(3).zip(src.chunks_exact(4)) {
                    px.copy_from_slice(&rgba[..3]);
                }
            }
            for (row, out) in frames.depth.chunks_exact_mut(w).enumerate() {
                let at = plane + row * padded;
                out.copy_from_slice(bytemuck::cast_slice(&bytes[at..at + w * 4]));
            }
        }
        self.readback.buffer.unmap();
        Ok(())
    }
}
