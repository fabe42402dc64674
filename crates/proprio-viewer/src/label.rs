//! A person labels preference pairs (`proprio reward-model label DIR`): a
//! window shows the two clips of each pair side by side, looping, and a key
//! says which is better. A finished round goes back to the training run,
//! which is waiting for it, and the window waits for the next round.

use crate::{ViewerError, add_window_plugins, preflight};
use bevy::asset::RenderAssetUsages;
use bevy::image::ImageSampler;
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};
use image::RgbImage;
use std::sync::{Arc, Mutex};

/// A round of pairs that waits for answers.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenPairs {
    /// Pairs in the round.
    pub pairs: usize,
    /// What the run is after, shown with each pair (the reward config's `goal`).
    pub goal: Option<String>,
}

/// Where the pairs come from and where the answers go (a preference run's label folder).
pub trait LabelDesk: Send + Sync + 'static {
    /// The oldest round that waits for answers, if one does.
    fn open_round(&mut self) -> Result<Option<OpenPairs>, String>;
    /// The frames of pair `k` of that round, the two clips side by side.
    fn pair(&mut self, k: usize) -> Result<Vec<RgbImage>, String>;
    /// The round's answers, one per pair: 1 the left clip is better, 0 the right, 0.5 equal.
    fn answer(&mut self, labels: &[f32]) -> Result<(), String>;
}

/// What a labelling session did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelReport {
    /// Rounds answered.
    pub rounds: usize,
    /// Pairs labelled.
    pub labels: usize,
}

/// Seconds between looks for a new round.
const POLL_SECONDS: f32 = 0.5;
/// Clip playback, frames per second.
const CLIP_FPS: f32 = 10.0;
/// The largest size a pair is scaled up to on screen, pixels.
const CLIP_BOX: (f32, f32) = (900.0, 560.0);

/// The answer a key gives: Left/A/1 the left clip, Right/D/2 the right, Down/Space/E/0 equally good.
fn answer_of(keys: &ButtonInput<KeyCode>) -> Option<f32> {
    use KeyCode::*;
    let any = |codes: &[KeyCode]| keys.any_just_pressed(codes.iter().copied());
    if any(&[ArrowLeft, KeyA, Digit1]) {
        Some(1.0)
    } else if any(&[ArrowRight, KeyD, Digit2]) {
        Some(0.0)
    } else if any(&[ArrowDown, Space, KeyE, Digit0]) {
        Some(0.5)
    } else {
        None
    }
}

/// The session: the desk, the round being answered, and what is on screen.
#[derive(Resource)]
struct Labelling {
    desk: Box<dyn LabelDesk>,
    /// Pairs in the open round, and the answers so far.
    round: Option<(usize, Vec<f32>)>,
    /// The goal of the open round.
    goal: Option<String>,
    /// The pair whose frames must be (re)loaded.
    load: Option<usize>,
    /// Frames of the pair on screen.
    frames: Vec<Handle<Image>>,
    /// Seconds since the pair appeared.
    shown: f32,
    /// Seconds until the next look for a round.
    poll_in: f32,
    /// Stop after this many rounds (none: until the window closes).
    rounds_left: Option<usize>,
    report: Arc<Mutex<Result<LabelReport, String>>>,
}

impl Labelling {
    fn fail(&mut self, message: String, exit: &mut MessageWriter<AppExit>) {
        *self.report.lock().unwrap_or_else(|e| e.into_inner()) = Err(message);
        exit.write(AppExit::error());
    }

    fn count(&self, labels: usize) {
        if let Ok(r) = self
            .report
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
        {
            r.rounds += 1;
            r.labels += labels;
        }
    }
}

/// Looks for a round when none is open.
fn poll(mut l: ResMut<Labelling>, time: Res<Time>, mut exit: MessageWriter<AppExit>) {
    if l.round.is_some() {
        return;
    }
    l.poll_in -= time.delta_secs();
    if l.poll_in > 0.0 {
        return;
    }
    l.poll_in = POLL_SECONDS;
    match l.desk.open_round() {
        Ok(Some(open)) if open.pairs > 0 => {
            l.round = Some((open.pairs, Vec::with_capacity(open.pairs)));
            l.goal = open.goal;
            l.load = Some(0);
        }
        Ok(_) => {}
        Err(e) => l.fail(e, &mut exit),
    }
}

/// Applies the answer keys and Backspace (back one pair); hands in a finished round.
fn choose(
    mut l: ResMut<Labelling>,
    keys: Res<ButtonInput<KeyCode>>,
    mut exit: MessageWriter<AppExit>,
) {
    let Some((pairs, mut answers)) = l.round.take() else {
        return;
    };
    if keys.just_pressed(KeyCode::Backspace) && answers.pop().is_some() {
        l.load = Some(answers.len());
    } else if let Some(answer) = answer_of(&keys) {
        answers.push(answer);
        if answers.len() < pairs {
            l.load = Some(answers.len());
        } else {
            if let Err(e) = l.desk.answer(&answers) {
                return l.fail(e, &mut exit);
            }
            l.count(pairs);
            l.frames.clear();
            l.poll_in = 0.0;
            if let Some(left) = l.rounds_left.as_mut() {
                *left -= 1;
                if *left == 0 {
                    exit.write(AppExit::Success);
                }
            }
            return;
        }
    }
    l.round = Some((pairs, answers));
}

#[derive(Component)]
struct ClipView;

#[derive(Component)]
struct Status;

fn spawn(mut commands: Commands) {
    commands.spawn(Camera2d);
    commands
        .spawn(Node {
            width: Val::Percent(100.0),
            height: Val::Percent(100.0),
            flex_direction: FlexDirection::Column,
            align_items: AlignItems::Center,
            justify_content: JustifyContent::Center,
            row_gap: Val::Px(12.0),
            ..default()
        })
        .with_children(|root| {
            root.spawn((Text::new(""), Status));
            root.spawn((ImageNode::default(), Node::default(), ClipView));
            root.spawn(Text::new(
                "Left / A / 1: the left clip is better      Right / D / 2: the right one      Down / Space / E / 0: equally good\nBackspace: back one pair      Esc: quit",
            ));
        });
}

/// An RGB frame as a texture, scaled without smoothing.
fn texture(frame: &RgbImage) -> Image {
    let rgba: Vec<u8> = frame
        .pixels()
        .flat_map(|p| [p[0], p[1], p[2], 255])
        .collect();
    let mut image = Image::new(
        Extent3d {
            width: frame.width(),
            height: frame.height(),
            depth_or_array_layers: 1,
        },
        TextureDimension::D2,
        rgba,
        TextureFormat::Rgba8UnormSrgb,
        RenderAssetUsages::RENDER_WORLD,
    );
    image.sampler = ImageSampler::nearest();
    image
}

/// Loads the pair to show, plays its frames, and writes the status line.
fn show(
    mut l: ResMut<Labelling>,
    time: Res<Time>,
    keys: Res<ButtonInput<KeyCode>>,
    mut images: ResMut<Assets<Image>>,
    mut clip: Query<(&mut ImageNode, &mut Node), With<ClipView>>,
    mut status: Query<&mut Text, With<Status>>,
    mut exit: MessageWriter<AppExit>,
) {
    if keys.just_pressed(KeyCode::Escape) {
        exit.write(AppExit::Success);
    }
    if let Some(k) = l.load.take() {
        match l.desk.pair(k) {
            Ok(frames) => {
                for old in std::mem::take(&mut l.frames) {
                    images.remove(&old);
                }
                l.frames = frames.iter().map(|f| images.add(texture(f))).collect();
                l.shown = 0.0;
                if let (Some(first), Ok((_, mut node))) = (frames.first(), clip.single_mut()) {
                    let (w, h) = (first.width() as f32, first.height() as f32);
                    let scale = (CLIP_BOX.0 / w).min(CLIP_BOX.1 / h).floor().max(1.0);
                    node.width = Val::Px(w * scale);
                    node.height = Val::Px(h * scale);
                }
            }
            Err(e) => return l.fail(e, &mut exit),
        }
    }
    l.shown += time.delta_secs();
    let frame = (l.shown * CLIP_FPS) as usize;
    if let Ok((mut node, _)) = clip.single_mut() {
        node.image = match l.frames.len() {
            0 => Handle::default(),
            n => l.frames[frame % n].clone(),
        };
    }
    if let Ok(mut text) = status.single_mut() {
        text.0 = match &l.round {
            Some((pairs, answers)) => format!(
                "pair {} of {}: which clip comes closer to {}?",
                answers.len() + 1,
                pairs,
                l.goal
                    .as_deref()
                    .map_or("the goal".into(), |g| format!("\"{g}\""))
            ),
            None => "waiting for the run to ask (a round of pairs)…".into(),
        };
    }
}

/// Opens a window on `desk` until it closes, Esc, or `rounds` rounds are answered.
pub fn label(desk: Box<dyn LabelDesk>, rounds: Option<usize>) -> Result<LabelReport, ViewerError> {
    if rounds == Some(0) {
        return Err(ViewerError::Options("--rounds must be at least 1".into()));
    }
    preflight::display()?;
    let adapter = preflight::adapter()?;
    let mut app = App::new();
    let window = Window {
        title: "Proprio: which clip is better?".into(),
        resolution: (1000, 800).into(),
        ..default()
    };
    let gl_failure = add_window_plugins(&mut app, &adapter, window, false);
    let report = Arc::new(Mutex::new(Ok(LabelReport::default())));
    app.insert_resource(session(desk, rounds, report.clone()))
        .add_systems(Startup, spawn)
        .add_systems(Update, (poll, choose, show).chain());
    let exit = app.run();
    if let Some(failure) = gl_failure.and_then(crate::GlFailure::take) {
        return Err(failure);
    }
    let report = report.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let report = report.map_err(ViewerError::Labels)?;
    if let AppExit::Error(code) = exit {
        return Err(ViewerError::Render(format!(
            "rendering failed on {} ({:?}) with error code {code}",
            adapter.name, adapter.backend
        )));
    }
    Ok(report)
}

fn session(
    desk: Box<dyn LabelDesk>,
    rounds: Option<usize>,
    report: Arc<Mutex<Result<LabelReport, String>>>,
) -> Labelling {
    Labelling {
        desk,
        round: None,
        goal: None,
        load: None,
        frames: Vec::new(),
        shown: 0.0,
        poll_in: 0.0,
        rounds_left: rounds,
        report,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::key;
    use bevy::input::{ButtonState, InputPlugin};

    /// Two rounds of 2 pairs; records what it is told.
    struct Desk {
        rounds: Vec<usize>,
        answers: Arc<Mutex<Vec<Vec<f32>>>>,
        shown: Arc<Mutex<Vec<usize>>>,
    }

    impl LabelDesk for Desk {
        fn open_round(&mut self) -> Result<Option<OpenPairs>, String> {
            Ok(self
                .rounds
                .first()
                .map(|&pairs| OpenPairs { pairs, goal: None }))
        }
        fn pair(&mut self, k: usize) -> Result<Vec<RgbImage>, String> {
            self.shown.lock().unwrap().push(k);
            Ok(vec![RgbImage::new(2, 1)])
        }
        fn answer(&mut self, labels: &[f32]) -> Result<(), String> {
            self.rounds.remove(0);
            self.answers.lock().unwrap().push(labels.to_vec());
            Ok(())
        }
    }

    /// Loads each requested pair as `show` would, without a renderer.
    fn load(mut l: ResMut<Labelling>) {
        if let Some(k) = l.load.take() {
            l.desk.pair(k).unwrap();
        }
    }

    #[test]
    fn keys_answer_each_pair_and_hand_in_the_round() {
        let answers = Arc::new(Mutex::new(Vec::new()));
        let shown = Arc::new(Mutex::new(Vec::new()));
        let desk = Desk {
            rounds: vec![2, 2],
            answers: answers.clone(),
            shown: shown.clone(),
        };
        let report = Arc::new(Mutex::new(Ok(LabelReport::default())));
        let mut app = App::new();
        app.add_plugins((MinimalPlugins, InputPlugin))
            .insert_resource(session(Box::new(desk), Some(2), report.clone()))
            .add_systems(Update, (poll, choose, load).chain());
        app.update();
        let mut press = |k: KeyCode| {
            key(&mut app, k, ButtonState::Pressed);
            app.update();
            key(&mut app, k, ButtonState::Released);
            app.update();
        };
        // Round 1: left, then back, then equal, right.
        for k in [
            KeyCode::ArrowLeft,
            KeyCode::Backspace,
            KeyCode::Space,
            KeyCode::KeyD,
        ] {
            press(k);
        }
        // Round 2: right, left (by digits).
        for k in [KeyCode::Digit2, KeyCode::Digit1] {
            press(k);
        }
        assert_eq!(
            *answers.lock().unwrap(),
            vec![vec![0.5, 0.0], vec![0.0, 1.0]]
        );
        assert_eq!(*shown.lock().unwrap(), vec![0, 1, 0, 1, 0, 1]);
        let report = report.lock().unwrap().clone().unwrap();
        assert_eq!(
            report,
            LabelReport {
                rounds: 2,
                labels: 4
            }
        );
        assert!(
            app.should_exit().is_some(),
            "the session stops after --rounds"
        );
    }
}
