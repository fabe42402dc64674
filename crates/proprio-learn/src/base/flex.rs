//! What the fused ops' flex paths check before they touch a tensor's memory.

use burn::backend::flex::{FlexTensor, Layout};
use burn::tensor::{Bytes, DType};

/// Whether the tensor is one contiguous `f32` slice from the start of its storage.
pub fn plain(t: &FlexTensor) -> bool {
    t.dtype() == DType::F32 && t.layout().is_contiguous() && t.layout().start_offset() == 0
}

/// [`plain`] and unshared, so it can be written in place.
pub fn writable(t: &FlexTensor) -> bool {
    plain(t) && t.is_unique()
}

/// `t` itself when it is [`writable`], or a fresh copy of its floats when
/// it is [`plain`] but shared (a module cloned before its optimizer step, a
/// graph still holding it): a fused in-place op then costs one copy instead
/// of falling back to a pass and an allocation per elementary op.
pub fn owned(t: FlexTensor) -> FlexTensor {
    if writable(&t) || !plain(&t) {
        return t;
    }
    let n = t.layout().num_elements();
    let copy = t.storage::<f32>()[..n].to_vec();
    FlexTensor::new(
        Bytes::from_elems(copy),
        Layout::contiguous(t.layout().shape().clone()),
        DType::F32,
    )
}

/// `f(t, s)` for each element `t` of `target` (written in place) and `s` of
/// `source`, compiled for the CPU's widest SIMD; both [`plain`], `target` [`writable`].
/// `f` should be a `move` closure: scalars it reads through a reference are
/// reloaded every element and keep the loop scalar.
pub fn zip_in_place(target: &mut FlexTensor, source: &FlexTensor, f: impl Fn(&mut f32, f32)) {
    let n = target.layout().num_elements();
    let s = &source.storage::<f32>()[..n];
    let t = &mut target.storage_mut::<f32>()[..n];
    pulp::Arch::new().dispatch(move || {
        for (t, &s) in t.iter_mut().zip(s) {
            f(t, s);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(values: Vec<f32>) -> FlexTensor {
        let shape = [values.len()];
        FlexTensor::new(
            Bytes::from_elems(values),
            Layout::contiguous(shape.into()),
            DType::F32,
        )
    }

    #[test]
    fn a_shared_tensor_is_copied_and_a_unique_one_kept() {
        let shared = tensor(vec![1.5, -2.0, 3.25]);
        let other = shared.clone();
        let mut mine = owned(shared);
        assert!(writable(&mine));
        mine.storage_mut::<f32>()[0] = 9.0;
        assert_eq!(&other.storage::<f32>()[..3], &[1.5, -2.0, 3.25]);
        assert_eq!(&mine.storage::<f32>()[..3], &[9.0, -2.0, 3.25]);
        drop(other);
        let at = mine.storage::<f32>().as_ptr();
        let kept = owned(mine);
        assert_eq!(
            kept.storage::<f32>().as_ptr(),
            at,
            "a unique tensor is not copied"
        );
    }
}
