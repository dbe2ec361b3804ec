//! `assets/column.gltf`, the model CI's many_foxes runs on (a clean
//! clone has no other), is the one the tests build in code.
//! `KEYFRAME_GPU_BEVY_WRITE_ASSETS=1 cargo test --test asset_file`
//! writes it again after a change to the builder.

mod common;

use common::gltf::{column, temp_dir, Column};

#[test]
fn the_committed_column_is_the_one_built_in_code() {
    let dir = temp_dir("asset_file");
    let built = column(&dir, "column", &Column::red());
    let committed = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/column.gltf");
    let built = std::fs::read(built).expect("the built file");
    if std::env::var_os("KEYFRAME_GPU_BEVY_WRITE_ASSETS").is_some() {
        std::fs::create_dir_all(committed.parent().expect("assets folder")).expect("assets folder");
        std::fs::write(&committed, &built).expect("write assets/column.gltf");
    }
    let on_disk = std::fs::read(&committed).expect("assets/column.gltf is committed");
    assert!(
        on_disk == built,
        "assets/column.gltf differs from the builder's; write it again (see the file's doc)"
    );
}
