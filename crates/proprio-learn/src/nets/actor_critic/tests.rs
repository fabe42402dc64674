use super::*;
use crate::base::tensor::host;

fn build(space: &Space, critic_only: Vec<[usize; 2]>) -> Result<ActorCritic> {
    build_with(space, critic_only, false)
}

fn build_with(space: &Space, critic_only: Vec<[usize; 2]>, aux: bool) -> Result<ActorCritic> {
    agent(space, &shape(critic_only, aux))
}

/// A small network: 8 hidden units, a one-layer CNN of 5 features, words of width 4.
fn shape(critic_only: Vec<[usize; 2]>, aux: bool) -> AgentShape {
    AgentShape {
        hidden: vec![8],
        cnn: CnnConfig {
            channels: vec![4],
            kernels: vec![4],
            strides: vec![4],
            features: 5,
        },
        text: TextConfig {
            buckets: 64,
            width: 4,
            features: 3,
            window: 0,
            clip: None,
            entities: None,
        },
        critic_only,
        aux,
        squash_mean: false,
        log_std_init: 0.0,
        action_bins: 0,
        action_bin_spacing: BinSpacing::Even,
        action_bin_greedy: GreedyToken::Mode,
        standardize_state: false,
    }
}

/// `shape` on `space`, a 2-component box action, seed 1.
fn agent(space: &Space, shape: &AgentShape) -> Result<ActorCritic> {
    let head = ActionHead::for_space(&Space::uniform_box(2, -1.0, 1.0))?;
    ActorCritic::new(
        space,
        &head,
        shape,
        &Device::flex(),
        &mut proprio::episode_rng(1, 0, 0),
    )
}

/// Outputs of actor and critic for one observation.
fn outputs(agent: &ActorCritic, obs: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let (params, value) = agent.forward(matrix(obs, 1, obs.len(), &Device::flex()));
    (host(params).unwrap(), host(value).unwrap())
}

#[test]
fn the_actor_is_blind_to_critic_only_values_and_the_critic_is_not() {
    let space = image_and_state();
    let agent = build(&space, vec![[193, 195]]).unwrap();
    let mut obs = vec![100.0; 195];
    obs[192..].copy_from_slice(&[0.5, 0.25, -0.75]);
    let (actor, critic) = outputs(&agent, &obs);
    obs[193] = 3.0;
    obs[194] = -2.0;
    let (blind, seeing) = outputs(&agent, &obs);
    assert_eq!(actor, blind, "the hidden values reached the actor");
    assert_ne!(critic, seeing, "the critic must read the hidden values");
    obs[192] = -1.0;
    assert_ne!(
        outputs(&agent, &obs).0,
        actor,
        "the rest of the state reaches the actor"
    );
    let pixels = build(&space, vec![[0, 4]]).err().map(|e| e.to_string());
    assert!(pixels.is_some_and(|e| e.contains("image pixel")));
    let outside = build(&space, vec![[190, 200]]).err().map(|e| e.to_string());
    assert!(outside.is_some_and(|e| e.contains("outside the 195")));
}

#[test]
fn a_squashed_mean_stays_inside_the_action_box() {
    let space = Space::uniform_box(3, -1.0, 1.0);
    let action_box = Space::Box {
        low: vec![2.0, -10.0],
        high: vec![3.0, -9.0],
    };
    let mean = |squash_mean: bool, obs: &[f32]| {
        let shape = AgentShape {
            hidden: vec![8],
            squash_mean,
            ..AgentShape::default()
        };
        let head = ActionHead::for_space(&action_box).unwrap();
        let mut rng = proprio::episode_rng(1, 0, 0);
        let agent = ActorCritic::new(&space, &head, &shape, &Device::flex(), &mut rng).unwrap();
        outputs(&agent, obs).0
    };
    for obs in [[0.0, 0.0, 0.0], [1e6, -1e6, 1e6]] {
        let squashed = mean(true, &obs);
        assert!((2.0..=3.0).contains(&squashed[0]), "{squashed:?}");
        assert!((-10.0..=-9.0).contains(&squashed[1]), "{squashed:?}");
        let raw = mean(false, &obs);
        assert!(
            raw[0] < 2.0 && raw[1] > -9.0,
            "the raw mean is near 0: {raw:?}"
        );
        assert!((squashed[0] - (2.5 + 0.5 * raw[0].tanh())).abs() < 1e-6);
    }
    let discrete = ActionHead::for_space(&Space::Discrete { n: 3, start: 0 }).unwrap();
    let shape = AgentShape {
        hidden: vec![8],
        squash_mean: true,
        ..AgentShape::default()
    };
    let mut rng = proprio::episode_rng(1, 0, 0);
    let refused = ActorCritic::new(&space, &discrete, &shape, &Device::flex(), &mut rng);
    assert!(refused.is_err_and(|e| e.to_string().contains("discrete")));
}

#[test]
fn the_gaussian_starts_at_log_std_init() {
    let shape = AgentShape {
        hidden: vec![8],
        log_std_init: -2.0,
        ..AgentShape::default()
    };
    let head = ActionHead::for_space(&Space::uniform_box(2, -1.0, 1.0)).unwrap();
    let space = Space::uniform_box(3, -1.0, 1.0);
    let mut rng = proprio::episode_rng(1, 0, 0);
    let agent = ActorCritic::new(&space, &head, &shape, &Device::flex(), &mut rng).unwrap();
    assert_eq!(host(agent.log_std().unwrap()).unwrap(), vec![-2.0, -2.0]);
}

fn image_and_state() -> Space {
    let image = Space::Image {
        height: 8,
        width: 8,
        channels: 3,
    };
    Space::Dict {
        spaces: vec![
            ("image".into(), image),
            ("state".into(), Space::uniform_box(3, -1.0, 1.0)),
        ],
    }
}

#[test]
fn the_auxiliary_head_is_scored_against_the_critic_only_values() {
    let space = image_and_state();
    let agent = build_with(&space, vec![[193, 195]], true).unwrap();
    let device = Device::flex();
    let mut obs: Vec<f32> = (0..195).map(|k| (k % 7) as f32 * 20.0).collect();
    obs[192..].copy_from_slice(&[0.5, 0.25, -0.75]);
    let aux_error = |obs: &[f32]| {
        let (_, _, error) = agent.forward_with_aux(matrix(obs, 1, 195, &device));
        host(error.unwrap()).unwrap()[0]
    };
    let x = agent.features(matrix(&obs, 1, 195, &device));
    let predicted = host(agent.aux.as_ref().unwrap().forward(agent.blind(x))).unwrap();
    let expected = ((predicted[0] - 0.25).powi(2) + (predicted[1] + 0.75).powi(2)) / 2.0;
    assert!((aux_error(&obs) - expected).abs() < 1e-5);
    let (params, _) = agent.forward(matrix(&obs, 1, 195, &device));
    obs[193] = predicted[0];
    obs[194] = predicted[1];
    assert!(aux_error(&obs) < 1e-10, "a perfect prediction scores 0");
    let (blind, _) = agent.forward(matrix(&obs, 1, 195, &device));
    assert_eq!(host(params).unwrap(), host(blind).unwrap());
    let nothing_to_predict = build_with(&space, Vec::new(), true).err();
    assert!(nothing_to_predict.is_some_and(|e| e.to_string().contains("critic_only")));
}

#[test]
fn an_instruction_is_read_by_its_encoder_and_hidden_state_stays_hidden() {
    // state (2 values, the second critic-only), then 3 token ids.
    let space = Space::Dict {
        spaces: vec![
            ("state".into(), Space::uniform_box(2, -1.0, 1.0)),
            (
                "instruction".into(),
                Space::Tokens {
                    vocab: 50_000,
                    max_len: 3,
                },
            ),
        ],
    };
    let ac = build(&space, vec![[1, 2]]).unwrap();
    assert_eq!(
        ac.actor
            .forward(Tensor::zeros([1, 2 + 3], &Device::flex()))
            .dims(),
        [1, 2]
    );
    let rows = [
        [0.3, 0.5, 49406.0, 736.0, 49407.0],
        [0.3, 0.5, 49406.0, 1746.0, 49407.0],
        [0.3, -0.9, 49406.0, 736.0, 49407.0],
    ];
    let flat: Vec<f32> = rows.iter().flatten().copied().collect();
    let params = host(ac.params(matrix(&flat, 3, 5, &Device::flex()))).unwrap();
    assert_ne!(
        params[0..2],
        params[2..4],
        "the words do not reach the actor"
    );
    assert_eq!(
        params[0..2],
        params[4..6],
        "the critic-only value reaches the actor"
    );
    let values = host(ac.value(matrix(&flat, 3, 5, &Device::flex()))).unwrap();
    assert_ne!(values[0], values[2], "the critic does not read its state");
}

#[test]
fn a_pixel_policy_reads_the_instruction_over_the_images_cells_and_critic_only_stays_hidden() {
    // An 8×8 image (192 pixels), 3 state values (the last two critic-only), 3 token ids.
    let space = Space::Dict {
        spaces: vec![
            (
                "image".into(),
                Space::Image {
                    height: 8,
                    width: 8,
                    channels: 3,
                },
            ),
            ("state".into(), Space::uniform_box(3, -1.0, 1.0)),
            (
                "instruction".into(),
                Space::Tokens {
                    vocab: 50_000,
                    max_len: 3,
                },
            ),
        ],
    };
    let build = |fields: &[(&str, usize)], cells: bool| {
        let mut shape = shape(vec![[193, 195]], false);
        shape.text.entities = Some(EntityConfig {
            fields: fields.iter().map(|&(k, w)| (k.to_string(), w)).collect(),
            roles: 2,
            naming_bias: -1.0,
            cells,
        });
        agent(&space, &shape)
    };
    let agent = build(&[], true).unwrap();
    // 3 state values, 2 roles × (4 channels, x, y, 3 colours) of the 2×2 cells, 3 context features.
    assert_eq!(agent.entities.as_ref().unwrap().out_dim(), 3 + 2 * 9 + 3);
    let mut obs: Vec<f32> = (0..192).map(|k| (k * 37 % 256) as f32).collect();
    obs.extend([0.5, 0.25, -0.75, 49406.0, 736.0, 49407.0]);
    let (actor, critic) = outputs(&agent, &obs);
    let mut hidden = obs.clone();
    hidden[193] = 3.0;
    let (blind, seeing) = outputs(&agent, &hidden);
    assert_eq!(actor, blind, "the hidden values reached the actor");
    assert_ne!(critic, seeing, "the critic must read the hidden values");
    let mut word = obs.clone();
    word[196] = 1746.0;
    assert_ne!(
        outputs(&agent, &word).0,
        actor,
        "the words do not reach the actor"
    );
    let mut pixels = obs.clone();
    pixels[100] = 255.0 - pixels[100];
    assert_ne!(
        outputs(&agent, &pixels).0,
        actor,
        "the image does not reach the actor"
    );
    let both = build(&[("state", 1)], true).err().map(|e| e.to_string());
    assert!(both.is_some_and(|e| e.contains("not both")));
    let fields = build(&[("state", 1)], false).err().map(|e| e.to_string());
    assert!(fields.is_some_and(|e| e.contains("text.entities.cells")));
}
