//! Unit tests of `src/model/target.rs`.

use crate::model::target::*;

#[test]
fn names_and_paths() {
    let n = NodeName::new("Hips");
    assert_eq!(n.name(), "Hips");
    assert_eq!(n.path(), [Some("Hips".to_string())]);
    let p = NodeName::from_path(vec![Some("Armature".into()), None, Some("Hand".into())]).unwrap();
    assert_eq!(p.name(), "Hand");
    assert_eq!(p.to_string(), "Armature/?/Hand");
    assert!(NodeName::from_path(vec![Some("a".into()), None]).is_none());
    assert!(NodeName::from_path(Vec::new()).is_none());
    assert_ne!(SourceId::new(), SourceId::new());
}
