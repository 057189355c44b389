//! Tests that need PostgreSQL, Python, Node, Prometheus or Chromium run by default and fail, saying what is
//! missing, when it is. Built with `KNOBEL_TEST_WITHOUT=postgres` (or `python`, `node`,
//! `prometheus`, `chromium`, or several separated by commas, e.g. `postgres,python`) they are marked ignored instead, with the reason, so that a run
//! never reports them passed without having run them. Refused when `CI` is set: CI runs
//! them all.

fn main() {
    println!("cargo::rerun-if-env-changed=KNOBEL_TEST_WITHOUT");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rustc-check-cfg=cfg(knobel_without_postgres)");
    println!("cargo::rustc-check-cfg=cfg(knobel_without_python)");
    println!("cargo::rustc-check-cfg=cfg(knobel_without_node)");
    println!("cargo::rustc-check-cfg=cfg(knobel_without_prometheus)");
    println!("cargo::rustc-check-cfg=cfg(knobel_without_chromium)");
    let without = std::env::var("KNOBEL_TEST_WITHOUT").unwrap_or_default();
    let ci = std::env::var("CI")
        .map(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
        .unwrap_or(false);
    for dependency in without.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        if !matches!(
            dependency,
            "postgres" | "python" | "node" | "prometheus" | "chromium"
        ) {
            panic!(
                "KNOBEL_TEST_WITHOUT names {dependency:?}: it may name postgres, python, \
                 node, prometheus and chromium, separated by commas"
            );
        }
        if ci {
            panic!(
                "KNOBEL_TEST_WITHOUT={without} is set, but CI is too: CI runs the tests that \
                 need {dependency}, so provide it (see .ci/run)"
            );
        }
        println!("cargo::rustc-cfg=knobel_without_{dependency}");
    }
}
