//! The layer check (`.ci/check-layers`, rules in `.ci/layers.toml`) passes on the workspace
//! as it is, and refuses a back arrow: a workspace crate depending on one above it, a pure
//! crate reaching the async or database stacks, the store reaching the metrics, and a
//! runtime file naming the metrics.

use std::path::Path;
use std::process::{Command, Output};

use knobel_e2e::workspace;
use serde_json::{Value, json};

fn check_layers(args: &[&str]) -> Output {
    Command::new("python3")
        .arg(workspace().join(".ci/check-layers"))
        .args(args)
        .output()
        .expect("python3 runs .ci/check-layers")
}

/// The workspace's `cargo metadata`.
fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .current_dir(workspace())
        .args(["metadata", "--format-version", "1"])
        .output()
        .expect("cargo metadata runs");
    assert!(out.status.success(), "cargo metadata failed");
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

fn package_id(meta: &Value, name: &str) -> String {
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no package {name}"))["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// `meta` with a normal dependency of `from` on `to` added.
fn with_arrow(mut meta: Value, from: &str, to: &str) -> Value {
    let (from, to) = (package_id(&meta, from), package_id(&meta, to));
    let node = meta["resolve"]["nodes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|n| n["id"] == from.as_str())
        .expect("the crate is resolved");
    node["deps"].as_array_mut().unwrap().push(json!({
        "name": "added",
        "pkg": to,
        "dep_kinds": [{"kind": null, "target": null}],
    }));
    meta
}

fn check_metadata(meta: &Value, dir: &Path) -> Output {
    let file = dir.join("metadata.json");
    std::fs::write(&file, serde_json::to_vec(meta).unwrap()).unwrap();
    check_layers(&["--metadata", file.to_str().unwrap()])
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The folders of the module seams in .ci/layers.toml (each `path` of a `[[modules]]`).
fn seams() -> Vec<String> {
    let rules = std::fs::read_to_string(workspace().join(".ci/layers.toml")).unwrap();
    let seams: Vec<String> = rules
        .lines()
        .filter_map(|line| line.strip_prefix("path = \""))
        .map(|rest| rest.trim_end_matches('"').to_owned())
        .collect();
    assert!(seams.len() >= 4, "{seams:?}");
    seams
}

#[test]
fn the_workspace_passes_the_layer_check() {
    let out = check_layers(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("layers ok"));
}

#[test]
fn a_back_arrow_between_crates_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let meta = metadata();
    assert!(check_metadata(&meta, dir.path()).status.success());
    // The engine reaching up to the leagues, the leagues to the arena.
    for (from, to) in [
        ("knobel-engine", "knobel-league"),
        ("knobel-league", "knobel-arena"),
        ("knobel-bots", "knobel-arena"),
        ("knobel-store", "knobel-arena"),
        ("knobel-league", "knobel-store"),
        ("knobel-store", "knobel-core"),
        ("knobel-core", "knobel-arena"),
        ("knobel-core", "knobel-bots"),
    ] {
        let out = check_metadata(&with_arrow(meta.clone(), from, to), dir.path());
        assert_eq!(out.status.code(), Some(1), "{from} -> {to} passed");
        let text = stderr(&out);
        assert!(
            text.contains(&format!(
                "{from} -> {to}: a dependency the layers do not allow"
            )),
            "{text}"
        );
    }
}

#[test]
fn a_crate_reaching_a_stack_it_must_not_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (from, to) in [("knobel-league", "tokio"), ("knobel-store", "prometheus")] {
        let meta = with_arrow(metadata(), from, to);
        let out = check_metadata(&meta, dir.path());
        assert_eq!(out.status.code(), Some(1));
        let text = stderr(&out);
        assert!(
            text.contains(&format!("{from}: its dependency tree has {to}")),
            "{text}"
        );
    }
}

#[test]
fn a_runtime_file_naming_the_metrics_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    // The module seams of .ci/layers.toml, with clean files.
    for seam in seams() {
        let folder = dir.path().join(seam);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("clean.rs"), "use super::Seat;\n").unwrap();
    }
    let root = dir.path().to_str().unwrap();
    let meta = dir.path().join("metadata.json");
    std::fs::write(&meta, serde_json::to_vec(&metadata()).unwrap()).unwrap();
    let args = ["--metadata", meta.to_str().unwrap(), "--root", root];
    let out = check_layers(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let bad = dir.path().join("arena/core/src/referee/bad.rs");
    std::fs::write(bad, "\nuse crate::metrics::Metrics;\n").unwrap();
    let out = check_layers(&args);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "arena/core/src/referee/bad.rs:2: names crate::metrics, which arena/core/src must not use"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_runtime_file_naming_the_wire_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for seam in seams() {
        std::fs::create_dir_all(dir.path().join(seam)).unwrap();
    }
    let lobby = dir.path().join("arena/core/src/lobby");
    std::fs::create_dir_all(&lobby).unwrap();
    std::fs::write(
        lobby.join("mod.rs"),
        "fn refused() -> tonic::Status {}
",
    )
    .unwrap();
    let meta = dir.path().join("metadata.json");
    std::fs::write(&meta, serde_json::to_vec(&metadata()).unwrap()).unwrap();
    let root = dir.path().to_str().unwrap();
    let out = check_layers(&["--metadata", meta.to_str().unwrap(), "--root", root]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(
            "arena/core/src/lobby/mod.rs:1: names tonic, which arena/core/src must not use"
        ),
        "{}",
        stderr(&out)
    );
}
