//! Finding a clip and a node by name instead of by index arithmetic.

use keyframe_gpu::{AnimationLibrary, Clip, Interpolation, Property, Track};
use keyframe_gpu::{NodeTransform, Rig};

fn clip(name: &str) -> Clip {
    let track = Track::new(
        0,
        Property::Scale,
        Interpolation::Step,
        vec![0.0],
        vec![1.0, 1.0, 1.0],
    );
    Clip::new(name, vec![track])
}

#[test]
fn clip_by_name_finds_the_first_clip_of_that_name() {
    let lib = AnimationLibrary::new(vec![clip("walk"), clip("run"), clip("walk")]).unwrap();
    assert_eq!(lib.clip_by_name("walk"), Some(0));
    assert_eq!(lib.clip_by_name("run"), Some(1));
    assert_eq!(lib.clip_by_name("fly"), None);
    assert_eq!(lib.clip_by_name(""), None);
}

#[test]
fn node_by_name_finds_builder_names_and_a_later_name_replaces_an_earlier() {
    let mut b = Rig::builder();
    let root = b.node(None, NodeTransform::IDENTITY);
    let hand = b.node(Some(root), NodeTransform::translation([0.0, 1.0, 0.0]));
    let _unnamed = b.node(Some(hand), NodeTransform::IDENTITY);
    b.name(root, "a");
    b.name(hand, "hand");
    b.name(root, "hips");
    let rig = b.build().unwrap();
    assert_eq!(rig.node_by_name("hips"), Some(root));
    assert_eq!(rig.node_by_name("hand"), Some(hand));
    assert_eq!(rig.node_by_name("a"), None);
    assert_eq!(rig.node_by_name("x"), None);
    assert_eq!(rig.nodes()[2].name, None);
}
