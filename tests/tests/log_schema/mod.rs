//! Every match log a test reads validates against the documented schema
//! (`docs/match-log.schema.json`); shared by the tests that fetch logs.

use std::sync::OnceLock;

use knobel_e2e::workspace;

/// Panics with the schema's complaints if `json` is not a match log of the documented format.
pub fn assert_valid_log(json: &str, what: &str) {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    let validator = VALIDATOR.get_or_init(|| {
        let text = std::fs::read_to_string(workspace().join("docs/match-log.schema.json"))
            .expect("docs/match-log.schema.json exists");
        let schema: serde_json::Value = serde_json::from_str(&text).expect("the schema is JSON");
        jsonschema::draft202012::new(&schema).expect("the schema compiles")
    });
    let value: serde_json::Value = serde_json::from_str(json).expect("a log is JSON");
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match the schema: {errors:#?}"
    );
}
