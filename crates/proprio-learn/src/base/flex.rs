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
