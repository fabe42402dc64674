use super::*;

fn image(h: usize, w: usize, c: usize) -> Space {
    Space::Image {
        height: h,
        width: w,
        channels: c,
    }
}

#[test]
fn stacked_rgb_and_state_frames_are_found_where_they_sit() {
    let frame = Space::Dict {
        spaces: vec![
            ("image".into(), image(4, 4, 3)),
            ("state".into(), Space::uniform_box(5, -1.0, 1.0)),
        ],
    };
    let stacked = Space::Tuple {
        spaces: vec![frame.clone(), frame],
    };
    let layout = ObsLayout::new(&stacked).unwrap();
    assert_eq!(layout.images, vec![(0, 3), (53, 3)]);
    assert_eq!(layout.state, vec![48..53, 101..106]);
    assert_eq!((layout.channels(), layout.state_dim()), (6, 10));
    let mixed = Space::Tuple {
        spaces: vec![image(4, 4, 3), image(8, 8, 3)],
    };
    assert!(ObsLayout::new(&mixed).is_err());
}

/// The patch path must compute what burn's `Conv2d` computes with the
/// same weights, or the NHWC reshapes have mixed pixels up.
#[test]
fn a_patch_convolution_equals_the_strided_convolution() {
    let (b, h, w, c, k, out) = (2, 6, 4, 3, 2, 5);
    let device = Device::flex();
    let mut rng = proprio::episode_rng(3, 0, 0);
    let conv_w = orthogonal(out, c * k * k, 1.0, &mut rng);
    let mut conv = Conv2dConfig::new([c, out], [k, k])
        .with_stride([k, k])
        .init(&device);
    conv.weight = Param::from_tensor(Tensor::from_data(
        TensorData::new(conv_w.clone(), [out, c, k, k]),
        &device,
    ));
    conv.bias = Some(Param::from_tensor(Tensor::zeros([out], &device)));
    // The same weights with rows ordered (ky, kx, channel).
    let mut patch_w = vec![0.0; conv_w.len()];
    for o in 0..out {
        for ch in 0..c {
            for ky in 0..k {
                for kx in 0..k {
                    let row = (ky * k + kx) * c + ch;
                    patch_w[row * out + o] = conv_w[((o * c + ch) * k + ky) * k + kx];
                }
            }
        }
    }
    let layer = linear(c * k * k, out, patch_w, &device);
    let pixels: Vec<f32> = (0..b * h * w * c)
        .map(|i| ((i * 37) % 11) as f32 - 5.0)
        .collect();
    let nhwc = Tensor::<4>::from_data(TensorData::new(pixels, [b, h, w, c]), &device);
    let by_conv = relu(conv.forward(nhwc.clone().permute([0, 3, 1, 2]))).permute([0, 2, 3, 1]);
    let by_patch = patch_conv(nhwc, k, &layer);
    let (a, p) = (
        by_conv.into_data().try_to_vec::<f32>().unwrap(),
        by_patch.into_data().try_to_vec::<f32>().unwrap(),
    );
    assert_eq!(a.len(), b * (h / k) * (w / k) * out);
    for (x, y) in a.iter().zip(&p) {
        assert!((x - y).abs() < 1e-4, "{x} vs {y}");
    }
}

#[test]
fn the_state_passes_through_after_the_image_features() {
    let space = Space::Dict {
        spaces: vec![
            ("image".into(), image(8, 8, 3)),
            ("state".into(), Space::uniform_box(2, -1.0, 1.0)),
        ],
    };
    let device = Device::flex();
    let cfg = CnnConfig {
        channels: vec![4],
        kernels: vec![4],
        strides: vec![4],
        features: 6,
    };
    let mut rng = proprio::episode_rng(0, 0, 0);
    let encoder = Encoder::new(ObsLayout::new(&space).unwrap(), &cfg, &device, &mut rng).unwrap();
    assert_eq!(encoder.out_dim(), 8);
    let mut row = vec![128.0; 8 * 8 * 3];
    row.extend([0.25, -7.0]);
    let x = Tensor::<2>::from_data(TensorData::new(row, [1, 194]), &device);
    let y = encoder.forward(x).into_data().try_to_vec::<f32>().unwrap();
    assert_eq!(&y[6..], &[0.25, -7.0]);
    assert!(y[..6].iter().all(|v| v.is_finite() && *v >= 0.0));
    let too_small = CnnConfig {
        kernels: vec![16],
        strides: vec![16],
        ..cfg
    };
    let error = Encoder::new(
        ObsLayout::new(&space).unwrap(),
        &too_small,
        &device,
        &mut rng,
    );
    assert!(
        error
            .unwrap_err()
            .to_string()
            .contains("smaller than a 16-pixel kernel")
    );
}

#[test]
fn a_cell_holds_its_channels_its_place_and_the_mean_colour_it_covers() {
    // An 8×8 image in 4×4-pixel cells (2×2), black but for a red pixel in
    // the top-right cell and a white bottom-left cell; then one state value.
    let space = Space::Dict {
        spaces: vec![
            ("image".into(), image(8, 8, 3)),
            ("state".into(), Space::uniform_box(1, -1.0, 1.0)),
        ],
    };
    let device = Device::flex();
    let cfg = CnnConfig {
        channels: vec![5],
        kernels: vec![4],
        strides: vec![4],
        features: 6,
    };
    let mut rng = proprio::episode_rng(0, 0, 0);
    let encoder = Encoder::new(ObsLayout::new(&space).unwrap(), &cfg, &device, &mut rng).unwrap();
    assert_eq!(encoder.cell_shape(), (4, 5 + 2 + 3));
    let mut row = vec![0.0; 8 * 8 * 3 + 1];
    row[(8 + 6) * 3] = 255.0;
    for y in 4..8 {
        for x in 0..4 {
            row[(y * 8 + x) * 3..(y * 8 + x + 1) * 3].fill(255.0);
        }
    }
    let obs = Tensor::<2>::from_data(TensorData::new(row, [1, 193]), &device);
    let cells = encoder.cells(&obs);
    assert_eq!(cells.dims(), [1, 4, 10]);
    let cells = cells.into_data().try_to_vec::<f32>().unwrap();
    let cell = |k: usize| &cells[k * 10..(k + 1) * 10];
    // Row by row: top-left, top-right, bottom-left, bottom-right.
    for (k, place, colour) in [
        (0, [-0.5, -0.5], [0.0, 0.0, 0.0]),
        (1, [0.5, -0.5], [1.0 / 16.0, 0.0, 0.0]),
        (2, [-0.5, 0.5], [1.0, 1.0, 1.0]),
        (3, [0.5, 0.5], [0.0, 0.0, 0.0]),
    ] {
        assert_eq!(cell(k)[5..7], place, "cell {k}");
        for (got, want) in cell(k)[7..].iter().zip(colour) {
            assert!((got - want).abs() < 1e-6, "cell {k}: {:?}", cell(k));
        }
    }
    // A black cell's channels are the ReLU of the patch layer's bias (0).
    assert!(cell(0)[..5].iter().all(|&v| v == 0.0));
    assert!(cell(2)[..5].iter().any(|&v| v > 0.0), "{:?}", cell(2));
}
