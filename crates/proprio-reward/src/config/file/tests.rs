//! Reading and writing reward files: every key checked, every kind written back.

use super::*;

fn parse(text: &str) -> std::result::Result<RewardConfig, String> {
    toml::from_str(text).map_err(|e| e.message().to_string())
}

#[test]
fn a_full_vlm_rm_config_reads_with_its_defaults() {
    let c = parse(
        "kind = \"vlm-rm\"\nmodel = \"m\"\ngoal = \"a pole upright\"\nbaseline = \"a pole\"\nalpha = 0.5\n",
    )
    .unwrap();
    assert!(
        matches!(&c.kind, RewardKind::VlmRm { alpha, .. } if *alpha == 0.5),
        "{c:?}"
    );
    assert_eq!((c.weight, c.task_weight), (1.0, 0.0));
    assert_eq!(c.camera, "default");
}

#[test]
fn every_bad_key_is_named() {
    let cases = [
        ("kind = \"vlm\"\ngoal = \"g\"", "unknown variant"),
        ("kind = \"vlm-rm\"", "needs goal"),
        (
            "kind = \"vlm-rm\"\ngoal = \"g\"\nalpha = 2.0",
            "alpha must lie",
        ),
        (
            "kind = \"vlm-rm\"\ngoal = \"g\"\nalpha = 0.5",
            "give baseline",
        ),
        (
            "kind = \"vlm-rm\"\ngoal = \"g\"\ngaol = \"x\"",
            "unknown field `gaol`",
        ),
        ("kind = \"vlm-rm\"\ngoal = \"g\"\nweight = 0.0", "both 0"),
        ("kind = \"vlm-rm\"\ngoal = \"g\"\nweight = nan", "finite"),
        (
            "kind = \"vlm-rm\"\ngoal = \"g\"\ndemo = \"d.gif\"",
            "roboclip",
        ),
        ("kind = \"roboclip\"", "needs demo"),
        (
            "kind = \"roboclip\"\ndemo = \"a\"\ndemo_text = \"b\"",
            "not several",
        ),
        (
            "kind = \"roboclip\"\ndemo_text = \"b\"\ngoals = { i = \"g\" }",
            "not several",
        ),
        (
            "kind = \"vlm-rm\"\ngoal = \"g\"\ngoals = { i = \"g\" }",
            "not both",
        ),
        (
            "kind = \"vlm-rm\"\ngoals = { i = \" \" }",
            "caption is empty",
        ),
        (
            "kind = \"preference\"\nlabeller = \"oracle\"\ngoals = { i = \"g\" }",
            "goals (a caption per instruction) is for",
        ),
        (
            "kind = \"preference\"\nlabeller = \"clip\"\ngoal = \"g\"\ngoals = { i = \"g\" }",
            "not both",
        ),
        ("kind = \"roboclip\"\ndemo_text = \"  \"", "empty"),
        ("goal = \"g\"", "missing field `kind`"),
        ("kind = \"preference\"", "needs labeller"),
        ("kind = \"preference\"\nlabeller = \"clip\"", "needs goal"),
        (
            "kind = \"preference\"\nlabeller = \"oracle\"\nsegment = 0",
            "positive",
        ),
        (
            "kind = \"preference\"\nlabeller = \"human\"",
            "needs label_dir",
        ),
        (
            "kind = \"preference\"\nlabeller = \"oracle\"\nlabel_dir = \"q\"",
            "label_dir is for",
        ),
        (
            "kind = \"preference\"\nlabeller = \"person\"",
            "unknown variant",
        ),
        (
            "kind = \"vlm-rm\"\ngoal = \"g\"\nlabeller = \"oracle\"",
            "for kind = \"preference\"",
        ),
        ("kind = \"progress\"", "needs model"),
        (
            "kind = \"progress\"\nmodel = \"p\"\ngoal = \"g\"",
            "not goal",
        ),
        (
            "kind = \"progress\"\nmodel = \"p\"\nshaping = \"sum\"",
            "unknown variant",
        ),
        (
            "kind = \"vlm-rm\"\ngoal = \"g\"\ninstruction = \"i\"",
            "instruction is for",
        ),
        (
            "kind = \"vlm-rm\"\ngoal = \"g\"\nensemble = [\"q\"]",
            "ensemble is for",
        ),
    ];
    for (text, expected) in cases {
        let err = parse(text).expect_err(text);
        assert!(err.contains(expected), "{text:?}: {err}");
    }
}

#[test]
fn a_progress_config_reads_and_writes_back() {
    let c = parse(
        "kind = \"progress\"\nmodel = \"p\"\ninstruction = \"pick up the cube\"\nshaping = \"progress\"\n",
    )
    .unwrap();
    let RewardKind::Progress {
        instruction,
        shaping,
        ..
    } = &c.kind
    else {
        panic!("{c:?}")
    };
    assert_eq!(
        (instruction.as_deref(), *shaping),
        (Some("pick up the cube"), Shaping::Progress)
    );
    assert_eq!(c.clip_dir().unwrap(), PathBuf::from("p").join("clip"));
    let written = proprio::serde_json::to_value(&c).unwrap();
    let read: RewardConfig = proprio::serde_json::from_value(written).unwrap();
    assert_eq!(read, c);
    let plain = parse("kind = \"progress\"\nmodel = \"p\"\n").unwrap();
    assert!(matches!(
        plain.kind,
        RewardKind::Progress {
            instruction: None,
            shaping: Shaping::Increase,
            ..
        }
    ));
}

#[test]
fn goals_per_instruction_read_and_write_back_for_every_kind_that_takes_them() {
    let goals = "goals = { \"pick up the red cube\" = \"the gripper holds the red cube up\" }\n";
    let per_instruction = Goal::PerInstruction(BTreeMap::from([(
        "pick up the red cube".to_string(),
        "the gripper holds the red cube up".to_string(),
    )]));
    for kind in ["vlm-rm", "roboclip", "preference\"\nlabeller = \"clip"] {
        let c = parse(&format!("kind = \"{kind}\"\n{goals}")).unwrap();
        let goal = match &c.kind {
            RewardKind::VlmRm { goal, .. } => goal,
            RewardKind::Roboclip {
                demo: Demo::Text(goal),
                ..
            } => goal,
            RewardKind::Preference {
                labeller: Labeller::Clip { goal },
                ..
            } => goal,
            other => panic!("{other:?}"),
        };
        assert_eq!(goal, &per_instruction);
        let written = proprio::serde_json::to_value(&c).unwrap();
        assert!(written.get("goal").is_none_or(|g| g.is_null()), "{written}");
        let read: RewardConfig = proprio::serde_json::from_value(written).unwrap();
        assert_eq!(read, c);
    }
}

#[test]
fn relative_paths_are_read_from_the_files_folder() {
    let dir = std::env::temp_dir().join(format!("proprio-reward-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("reward.toml");
    std::fs::write(
        &file,
        "kind = \"roboclip\"\nmodel = \"clip\"\ndemo = \"demo.gif\"\n",
    )
    .unwrap();
    let c = RewardConfig::read(&file).unwrap();
    let written = proprio::serde_json::to_value(&c).unwrap();
    assert_eq!(
        written["demo"],
        proprio::serde_json::json!(dir.join("demo.gif"))
    );
    let read: RewardConfig = proprio::serde_json::from_value(written).unwrap();
    assert_eq!(read, c, "run.json keeps the flat form and reads back");
    assert_eq!(c.model.as_deref(), Some(dir.join("clip").as_path()));
    let RewardKind::Roboclip {
        demo: Demo::Video(demo),
        ..
    } = &c.kind
    else {
        panic!("{c:?}")
    };
    assert_eq!(demo, &dir.join("demo.gif"));
    std::fs::write(
        &file,
        "kind = \"progress\"\nmodel = \"a\"\nensemble = [\"b\", \"/c\"]\n",
    )
    .unwrap();
    let c = RewardConfig::read(&file).unwrap();
    let RewardKind::Progress { ensemble, .. } = &c.kind else {
        panic!("{c:?}")
    };
    assert_eq!(ensemble, &[dir.join("b"), PathBuf::from("/c")]);
    let read: RewardConfig =
        proprio::serde_json::from_value(proprio::serde_json::to_value(&c).unwrap()).unwrap();
    assert_eq!(read, c, "an ensemble reads back from run.json");
    std::fs::write(&file, "kind = \"roboclip\"\n").unwrap();
    let err = RewardConfig::read(&file).unwrap_err().to_string();
    assert!(err.starts_with(&file.display().to_string()) && err.contains("needs demo"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_goals_table_reads_from_a_reward_file_or_alone_and_an_empty_one_is_refused() {
    let dir = std::env::temp_dir().join(format!("proprio-goals-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("goals.toml");
    let read = |text: &str| {
        std::fs::write(&file, text).unwrap();
        Goal::read_table(&file)
    };
    let table = BTreeMap::from([("lift it".to_string(), "it is up".to_string())]);
    let reward = "kind = \"vlm-rm\"\n[goals]\n\"lift it\" = \"it is up\"\n";
    assert_eq!(read(reward).unwrap(), table);
    assert_eq!(
        read("[goals]\n\"lift it\" = \"it is up\"\n").unwrap(),
        table
    );
    for (text, expected) in [
        ("kind = \"vlm-rm\"\ngoal = \"g\"\n", "no [goals] table"),
        ("[goals]\n", "no [goals] table"),
        (
            "[goals]\n\"lift it\" = \" \"\n",
            "\"lift it\" or its caption is empty",
        ),
        ("[goals]\n\"lift it\" = 3\n", "goals"),
    ] {
        let e = read(text).unwrap_err().to_string();
        assert!(
            e.contains(expected) && e.contains("goals.toml"),
            "{text}: {e}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
