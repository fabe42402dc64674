//! What the fused ops' flex paths check before they touch a tensor's memory.

use burn::backend::flex::FlexTensor;
use burn::tensor::DType;

/// Whether the tensor is one contiguous `f32` slice from the start of its storage.
pub fn plain(t: &FlexTensor) -> bool {
    t.dtype() == DType::F32 && t.layout().is_contiguous() && t.layout().start_offset() == 0
}

/// [`plain`] and unshared, so it can be written in place.
pub fn writable(t: &FlexTensor) -> bool {
    plain(t) && t.is_unique()
}

/// `f(t, s)` for each element `t` of `target` (written in place) and `s` of
/// `source`, compiled for the CPU's widest SIMD; both [`plain`], `target` [`writable`].
pub fn zip_in_place(target: &mut FlexTensor, source: &FlexTensor, f: impl Fn(&mut f32, f32)) {
    let n = target.layout().num_elements();
    let s = &source.storage::<f32>()[..n];
    let t = &mut target.storage_mut::<f32>()[..n];
    pulp::Arch::new().dispatch(|| {
        for (t, &s) in t.iter_mut().zip(s) {
            f(t, s);
        }
    });
}
