//! The deployment files in deploy/ are checked, not trusted: valid YAML and JSON; the
//! compose file, the Kubernetes manifests, the Dockerfile, the Prometheus configuration and
//! the Grafana provisioning refer only to images, ports, variables and files that exist;
//! the variables the arena is given are ones `knobel serve` reads; the compose profile
//! `cluster` runs three arenas in cluster mode with the single arena's settings, and
//! Prometheus scrapes exactly the arenas of the setup that runs; Prometheus' own `promtool`
//! accepts the configuration and rules, and the alert rules fire in its unit tests
//! (deploy/prometheus/tests.yml); every scrape config supplied (compose's, the Kubernetes
//! PodMonitor) has the job the alerts select; the manifests pass Kubernetes' own schemas,
//! strictly (`kubernetes-validate` from PyPI, which carries them offline), and `kubectl
//! apply --dry-run=client` passes on them against a stand-in API server (kube_api/). Both
//! tools are installed by .ci/run, and in CI a missing one fails the test rather than
//! skipping its check. Docker has no daemon here: the image is not built.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use knobel_e2e::{binaries, workspace};
use serde_yaml_ng::Value;

mod kube_api;

fn deploy() -> PathBuf {
    workspace().join("deploy")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The YAML file at `path`, its merge keys (`<<: *anchor`, which Compose applies) applied.
fn yaml(path: &Path) -> Value {
    let mut value: Value = serde_yaml_ng::from_str(&read(path))
        .unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", path.display()));
    value
        .apply_merge()
        .unwrap_or_else(|e| panic!("{}: a merge key does not merge: {e}", path.display()));
    // `apply_merge` leaves a merge key inside a merged mapping in place: such a file would
    // be read here otherwise than Compose reads it.
    fn has_merge_key(v: &Value) -> bool {
        match v {
            Value::Mapping(m) => m.contains_key("<<") || m.values().any(has_merge_key),
            Value::Sequence(s) => s.iter().any(has_merge_key),
            Value::Tagged(t) => has_merge_key(&t.value),
            _ => false,
        }
    }
    assert!(
        !has_merge_key(&value),
        "{}: a merged mapping has a merge key of its own; merge the anchors side by side \
         (`<<: [*a, *b]`) instead",
        path.display()
    );
    value
}

/// Every YAML document in `path`.
fn yaml_documents(path: &Path) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(&read(path))
        .map(|doc| {
            serde::Deserialize::deserialize(doc)
                .unwrap_or_else(|e| panic!("{} is not valid YAML: {e}", path.display()))
        })
        .collect()
}

fn get<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.')
        .fold(v, |v, key| match key.parse::<usize>() {
            Ok(i) => &v[i],
            Err(_) => &v[key],
        })
}

fn str_at<'a>(v: &'a Value, path: &str) -> &'a str {
    get(v, path)
        .as_str()
        .unwrap_or_else(|| panic!("{path} is not a string in {v:?}"))
}

/// The environment variables and flags `knobel serve` reads, from its `--help`.
fn serve_help() -> String {
    let output = Command::new(binaries().join("knobel"))
        .args(["serve", "--help"])
        .output()
        .expect("run knobel serve --help");
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap()
}

/// Variables the arena reads: those `knobel serve --help` names, and the log filter.
fn arena_variables() -> BTreeSet<String> {
    let help = serve_help();
    let mut vars: BTreeSet<String> = help
        .split("[env: ")
        .skip(1)
        .filter_map(|rest| rest.split(['=', ']']).next())
        .map(str::to_owned)
        .collect();
    vars.insert("RUST_LOG".to_owned());
    assert!(vars.contains("DATABASE_URL"), "{help}");
    assert!(vars.contains("KNOBEL_LISTEN"), "{help}");
    vars
}

/// `${NAME}`, `${NAME:?message}` and `${NAME:-default}` in `text`.
fn interpolated(text: &str) -> BTreeSet<String> {
    text.split("${")
        .skip(1)
        .map(|rest| {
            rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// The variables of `text` that Compose requires, `${NAME:?message}` or `${NAME?message}`:
/// it refuses to run without them, whichever profiles run.
fn required(text: &str) -> BTreeSet<String> {
    text.split("${")
        .skip(1)
        .filter_map(|rest| {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            let after = &rest[end..];
            (after.starts_with(":?") || after.starts_with('?')).then(|| rest[..end].to_owned())
        })
        .collect()
}

/// The port of an `ADDR:PORT` value.
fn port_of(addr: &str) -> u16 {
    addr.rsplit(':')
        .next()
        .and_then(|port| port.parse().ok())
        .unwrap_or_else(|| panic!("{addr:?} does not end in a port"))
}

/// The compose services of `profile` (`None`: those without a profile, which every
/// `docker compose up` runs).
fn compose_services<'a>(compose: &'a Value, profile: Option<&str>) -> BTreeSet<&'a str> {
    compose["services"]
        .as_mapping()
        .expect("services")
        .iter()
        .filter(|(_, service)| {
            let profiles: Vec<&str> = service["profiles"]
                .as_sequence()
                .into_iter()
                .flatten()
                .map(|p| p.as_str().expect("a profile is a string"))
                .collect();
            match profile {
                None => profiles.is_empty(),
                Some(profile) => profiles.contains(&profile),
            }
        })
        .map(|(name, _)| name.as_str().expect("a service name is a string"))
        .collect()
}

/// The (host, container) ports a compose service publishes (`ports:`, `[IP:]HOST:CONTAINER`).
fn published(service: &Value) -> Vec<(u16, u16)> {
    service["ports"]
        .as_sequence()
        .into_iter()
        .flatten()
        .map(|p| {
            let p = p.as_str().expect("ports are strings, \"HOST:CONTAINER\"");
            let mut parts = p.rsplit(':');
            let mut port = || {
                parts
                    .next()
                    .and_then(|port| port.parse().ok())
                    .unwrap_or_else(|| panic!("port {p:?} is not HOST:CONTAINER"))
            };
            let container = port();
            (port(), container)
        })
        .collect()
}

/// The ports a compose service exposes to the other containers only (`expose:`).
fn exposed(service: &Value) -> BTreeSet<u16> {
    service["expose"]
        .as_sequence()
        .into_iter()
        .flatten()
        .map(|p| {
            p.as_str()
                .and_then(|p| p.parse().ok())
                .unwrap_or_else(|| panic!("expose {p:?} is not a port"))
        })
        .collect()
}

#[test]
fn the_dockerfile_is_multi_stage_runs_unprivileged_and_checks_grpc_health() {
    let text = read(&deploy().join("Dockerfile"));
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    let froms: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("FROM "))
        .copied()
        .collect();
    assert!(froms.len() >= 2, "a multi-stage build: {froms:?}");
    for from in &froms {
        let image = from.split_whitespace().nth(1).unwrap();
        assert!(
            image.contains(':') && !image.ends_with(":latest"),
            "base images are pinned: {from}"
        );
    }
    assert!(
        froms.last().unwrap().contains("-slim"),
        "a small runtime: {froms:?}"
    );
    assert!(
        text.contains("COPY --from=build"),
        "the runtime takes the build's binary only"
    );
    assert!(
        text.contains("--locked"),
        "the image builds from Cargo.lock"
    );
    let user = lines
        .iter()
        .filter_map(|l| l.strip_prefix("USER "))
        .next_back()
        .expect("a USER line");
    let uid = user.split(':').next().unwrap();
    assert!(uid != "0" && uid != "root", "non-root: USER {user}");
    let health = lines
        .iter()
        .position(|l| l.starts_with("HEALTHCHECK"))
        .expect("a HEALTHCHECK");
    let command = lines[health..].join(" ");
    assert!(command.contains(r#"CMD ["knobel", "health""#), "{command}");
    // The health command exists and fails (exit status 1) where no arena answers.
    let output = Command::new(binaries().join("knobel"))
        .args([
            "health",
            "--server",
            "http://127.0.0.1:9",
            "--timeout-ms",
            "500",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    // What the image exposes is where the arena listens in it.
    let exposed: Vec<u16> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("EXPOSE "))
        .flat_map(|ports| ports.split_whitespace().map(|p| p.parse().unwrap()))
        .collect();
    assert_eq!(exposed, [50051, 9464, 8080]);
    assert!(text.contains("KNOBEL_LISTEN=0.0.0.0:50051"));
    assert!(text.contains("KNOBEL_METRICS_LISTEN=0.0.0.0:9464"));
    assert!(text.contains("KNOBEL_WEB_LISTEN=0.0.0.0:8080"));
    assert!(deploy().join("Dockerfile.dockerignore").exists());
    // The build context is the repository root: what it copies is there.
    for path in [
        "Cargo.toml",
        "Cargo.lock",
        "arena",
        "engine",
        "proto",
        "bots",
        "tests",
    ] {
        assert!(workspace().join(path).exists(), "{path}");
    }
}

#[test]
fn compose_wires_the_arena_postgres_prometheus_and_grafana_from_files_that_exist() {
    let path = deploy().join("compose.yaml");
    let text = read(&path);
    let compose = yaml(&path);
    let services = compose["services"].as_mapping().expect("services");
    // `docker compose up` runs these; the profile `cluster` (its own test, below) the rest.
    assert_eq!(
        compose_services(&compose, None),
        BTreeSet::from(["arena", "grafana", "postgres", "prometheus"])
    );
    // Images: the arena's is built from deploy/Dockerfile; the others are pinned.
    let arena = &compose["services"]["arena"];
    assert_eq!(str_at(arena, "build.dockerfile"), "deploy/Dockerfile");
    let context = deploy().join(str_at(arena, "build.context"));
    assert!(context.join("deploy/Dockerfile").exists());
    for name in ["postgres", "prometheus", "grafana"] {
        let image = str_at(&compose["services"][name], "image");
        let tag = image.rsplit_once(':').map(|(_, tag)| tag).unwrap_or("");
        assert!(
            !tag.is_empty() && tag != "latest",
            "{name}: pinned image, not {image}"
        );
    }
    // Every file mounted is in the repository.
    for (name, service) in services {
        for volume in service["volumes"].as_sequence().into_iter().flatten() {
            let volume = volume.as_str().unwrap();
            let source = volume.split(':').next().unwrap();
            if source.starts_with('.') {
                assert!(
                    deploy().join(source).exists(),
                    "{name:?} mounts {source}, which is not in deploy/"
                );
            } else {
                assert!(
                    compose["volumes"].get(source).is_some(),
                    "{name:?}: named volume {source} is declared"
                );
            }
        }
    }
    // Every variable interpolated is in the example environment file: set there if Compose
    // requires it, else at least shown, commented out (a profile's own variable).
    let example = read(&deploy().join(".env.example"));
    let required = required(&text);
    for var in interpolated(&text) {
        let set = example.lines().any(|l| l.starts_with(&format!("{var}=")));
        let shown = example.lines().any(|l| l.starts_with(&format!("# {var}=")));
        assert!(
            set || (shown && !required.contains(&var)),
            "${{{var}}} is used by compose.yaml but not in deploy/.env.example{}",
            if shown {
                " (it is required, so it must be set)"
            } else {
                ""
            }
        );
    }
    // The arena gets variables it reads, and listens where the others look for it.
    let known = arena_variables();
    let env = arena["environment"].as_mapping().unwrap();
    for key in env.keys() {
        let key = key.as_str().unwrap();
        assert!(
            known.contains(key),
            "the arena does not read {key}: {known:?}"
        );
    }
    let grpc = port_of(str_at(arena, "environment.KNOBEL_LISTEN"));
    let metrics = port_of(str_at(arena, "environment.KNOBEL_METRICS_LISTEN"));
    let web = port_of(str_at(arena, "environment.KNOBEL_WEB_LISTEN"));
    assert_eq!((grpc, metrics, web), (50051, 9464, 8080));
    assert_eq!(str_at(arena, "ports.0"), "50051:50051");
    assert_eq!(str_at(arena, "ports.1"), "8080:8080");
    assert!(str_at(arena, "environment.DATABASE_URL").contains("@postgres:5432/"));
    let prometheus = yaml(&deploy().join("prometheus/prometheus.yml"));
    assert_eq!(
        str_at(&prometheus, "scrape_configs.0.static_configs.0.targets.0"),
        format!("arena:{metrics}")
    );
    let health = arena["healthcheck"]["test"].as_sequence().unwrap();
    assert_eq!(health[1].as_str(), Some("knobel"));
    assert_eq!(health[2].as_str(), Some("health"));
    // Grafana: the data source is the compose Prometheus, the dashboards the mounted ones.
    let datasource = yaml(&deploy().join("grafana/provisioning/datasources/prometheus.yaml"));
    assert_eq!(
        str_at(&datasource, "datasources.0.url"),
        "http://prometheus:9090"
    );
    let provider = yaml(&deploy().join("grafana/provisioning/dashboards/knobel.yaml"));
    let dashboards_at = str_at(&provider, "providers.0.options.path");
    let grafana = &compose["services"]["grafana"];
    assert!(
        grafana["volumes"]
            .as_sequence()
            .unwrap()
            .iter()
            .any(|v| v.as_str() == Some(&format!("./grafana/dashboards:{dashboards_at}:ro"))),
        "the dashboards are mounted where the provider reads them"
    );
    let dashboard: serde_json::Value =
        serde_json::from_str(&read(&deploy().join("grafana/dashboards/knobel.json")))
            .expect("the dashboard is valid JSON");
    let uid = str_at(&datasource, "datasources.0.uid");
    for panel in dashboard["panels"].as_array().unwrap() {
        assert_eq!(panel["datasource"]["uid"], uid, "{}", panel["title"]);
    }
    // The Prometheus rule files it names are mounted next to it.
    for rule_file in prometheus["rule_files"].as_sequence().unwrap() {
        let file = rule_file.as_str().unwrap();
        assert!(
            text.contains(&format!("./prometheus/{file}:/etc/prometheus/{file}:ro")),
            "{file} is mounted"
        );
    }
}

/// The command compose.yaml's header gives for the profile `cluster`, and the services it
/// leaves out (`--scale NAME=0`).
fn cluster_command(text: &str) -> (String, BTreeSet<String>) {
    let command = text
        .lines()
        .map_while(|l| l.strip_prefix('#'))
        .map(str::trim)
        .find(|l| l.contains("--profile cluster up"))
        .expect("compose.yaml's header says how to start the profile cluster")
        .to_owned();
    let words: Vec<&str> = command.split_whitespace().collect();
    let left_out = words
        .windows(2)
        .filter(|w| w[0] == "--scale")
        .filter_map(|w| w[1].strip_suffix("=0"))
        .map(str::to_owned)
        .collect();
    (command, left_out)
}

/// The targets of the job `knobel-arena` in the Prometheus configuration `file`.
fn arena_targets(file: &str) -> BTreeSet<String> {
    let config = yaml(&deploy().join("prometheus").join(file));
    let job = config["scrape_configs"]
        .as_sequence()
        .unwrap_or_else(|| panic!("{file}: scrape_configs"))
        .iter()
        .find(|s| s["job_name"].as_str() == Some("knobel-arena"))
        .unwrap_or_else(|| panic!("{file}: no job knobel-arena"));
    job["static_configs"]
        .as_sequence()
        .unwrap_or_else(|| panic!("{file}: the arenas are static targets"))
        .iter()
        .flat_map(|c| c["targets"].as_sequence().unwrap())
        .map(|t| t.as_str().unwrap().to_owned())
        .collect()
}

/// Every string in `value` (keys aside).
fn strings(value: &Value) -> Vec<&str> {
    match value {
        Value::String(s) => vec![s],
        Value::Sequence(s) => s.iter().flat_map(strings).collect(),
        Value::Mapping(m) => m.values().flat_map(strings).collect(),
        Value::Tagged(t) => strings(&t.value),
        _ => Vec::new(),
    }
}

#[test]
fn compose_profile_cluster_runs_three_arenas_in_cluster_mode_with_nats() {
    let path = deploy().join("compose.yaml");
    let text = read(&path);
    let compose = yaml(&path);
    let service = |name: &str| &compose["services"][name];
    let single = service("arena");
    let image = str_at(single, "image");

    // The profile: the NATS server and three arenas of the single arena's image.
    let cluster = compose_services(&compose, Some("cluster"));
    let arenas: Vec<&str> = cluster
        .iter()
        .copied()
        .filter(|name| service(name)["image"].as_str() == Some(image))
        .collect();
    assert_eq!(arenas, ["arena-1", "arena-2", "arena-3"], "{cluster:?}");
    let nats_name = cluster
        .iter()
        .copied()
        .find(|name| str_at(service(name), "image").starts_with("nats:"))
        .expect("a NATS server in the profile cluster");
    assert_eq!(cluster.len(), arenas.len() + 1, "{cluster:?}");
    for name in &cluster {
        assert_eq!(
            service(name)["profiles"].as_sequence().unwrap(),
            &[Value::from("cluster")],
            "{name} is in the profile cluster only"
        );
    }

    // NATS: pinned, the image deploy/k8s/nats.yaml runs, reachable by the containers only,
    // and healthy before an arena starts (an arena stops if NATS does not answer in 3 s).
    let nats = service(nats_name);
    let nats_image = str_at(nats, "image");
    let (_, tag) = nats_image.rsplit_once(':').unwrap();
    assert!(
        !tag.is_empty() && tag != "latest",
        "pinned, not {nats_image}"
    );
    let (objects, _) = kubernetes();
    assert_eq!(
        nats_image,
        str_at(
            find_named(&objects, "Deployment", "knobel-nats"),
            "spec.template.spec.containers.0.image"
        ),
        "the NATS server of deploy/k8s/nats.yaml"
    );
    let nats_args: Vec<&str> = strings(&nats["command"]);
    let nats_port: u16 = nats_args
        .windows(2)
        .find(|w| w[0] == "--port")
        .map(|w| w[1].parse().unwrap())
        .expect("the NATS server's --port");
    assert!(published(nats).is_empty(), "NATS is not published");
    assert_eq!(exposed(nats), BTreeSet::from([nats_port]));
    assert_eq!(str_at(nats, "healthcheck.test.0"), "CMD");

    // Each arena: the single arena's definition and settings, and cluster mode's.
    let known = arena_variables();
    let single_env = single["environment"].as_mapping().unwrap();
    let grpc = port_of(str_at(single, "environment.KNOBEL_LISTEN"));
    let metrics = port_of(str_at(single, "environment.KNOBEL_METRICS_LISTEN"));
    let web = port_of(str_at(single, "environment.KNOBEL_WEB_LISTEN"));
    let mut tokens = BTreeSet::new();
    let mut advertised = BTreeSet::new();
    for name in &arenas {
        let arena = service(name);
        for key in ["build", "command", "healthcheck", "stop_grace_period"] {
            assert_eq!(
                arena[key], single[key],
                "{name}: {key} as the single arena's"
            );
        }
        let env = arena["environment"].as_mapping().unwrap();
        for key in env.keys() {
            let key = key.as_str().unwrap();
            assert!(known.contains(key), "{name}: the arena does not read {key}");
        }
        for (key, value) in single_env {
            assert_eq!(
                env.get(key),
                Some(value),
                "{name}: {key:?} as the single arena's (the same database, admin token, ports)"
            );
        }
        assert_eq!(
            str_at(arena, "environment.KNOBEL_NATS_URL"),
            format!("nats://{nats_name}:{nats_port}"),
            "{name}: the profile's NATS server"
        );
        let peer_listen = str_at(arena, "environment.KNOBEL_PEER_LISTEN");
        assert!(
            peer_listen.starts_with("0.0.0.0:"),
            "{name}: the peer port listens on the container's network, not {peer_listen}"
        );
        let peer = port_of(peer_listen);
        // Other arenas reach it by its service name.
        assert_eq!(
            str_at(arena, "environment.KNOBEL_PEER_ADVERTISE"),
            format!("{name}:{peer}"),
            "{name}: the address other arenas reach its peer port at"
        );
        advertised.insert(str_at(arena, "environment.KNOBEL_PEER_ADVERTISE"));
        let token = str_at(arena, "environment.KNOBEL_PEER_TOKEN");
        assert_eq!(
            interpolated(token),
            BTreeSet::from(["KNOBEL_PEER_TOKEN".to_owned()]),
            "{name}: the peer token comes from deploy/.env, not {token:?}"
        );
        tokens.insert(token);
        // Bots and the web viewer are published; metrics and the peer port are for the
        // other containers only.
        let container_ports: BTreeSet<u16> = published(arena).iter().map(|p| p.1).collect();
        assert_eq!(container_ports, BTreeSet::from([grpc, web]), "{name}");
        assert_eq!(exposed(arena), BTreeSet::from([metrics, peer]), "{name}");
        for (dependency, condition) in [
            ("postgres", "service_healthy"),
            (nats_name, "service_healthy"),
        ] {
            assert_eq!(
                arena["depends_on"][dependency]["condition"].as_str(),
                Some(condition),
                "{name} waits for {dependency}"
            );
        }
    }
    assert_eq!(
        tokens.len(),
        1,
        "one peer token for every arena: {tokens:?}"
    );
    assert_eq!(advertised.len(), arenas.len(), "{advertised:?}");

    // The variables: Compose interpolates the whole file whichever profiles run, so the
    // single setup requires none that only the cluster uses.
    let example = read(&deploy().join(".env.example"));
    let single_setup = compose_services(&compose, None);
    let used_by_single: BTreeSet<String> = single_setup
        .iter()
        .flat_map(|name| strings(service(name)))
        .flat_map(interpolated)
        .collect();
    for var in required(&text) {
        assert!(
            used_by_single.contains(&var),
            "compose.yaml requires {var}, which only the profile cluster uses"
        );
    }
    // The example shows a variable of the cluster alone commented out: whoever copies it
    // for the single setup leaves it unset.
    let commented = |var: &str| {
        example
            .lines()
            .find_map(|l| l.strip_prefix(&format!("# {var}=")))
            .unwrap_or_else(|| panic!("deploy/.env.example shows {var}, commented out"))
    };
    for token in &tokens {
        for var in interpolated(token) {
            commented(&var);
        }
    }

    // The two setups: `docker compose up` runs the services without a profile; the
    // documented cluster command adds the profile and leaves out the single arena.
    let (command, left_out) = cluster_command(&text);
    assert_eq!(left_out, BTreeSet::from(["arena".to_owned()]), "{command}");
    for doc in ["deploy/README.md", "docs/operations.md"] {
        assert!(
            read(&workspace().join(doc)).contains(&command),
            "{doc} gives the cluster's command: {command}"
        );
    }
    let cluster_setup: BTreeSet<&str> = single_setup
        .iter()
        .copied()
        .filter(|name| !left_out.contains(*name))
        .chain(cluster.iter().copied())
        .collect();
    for (setup, running) in [("single", &single_setup), ("cluster", &cluster_setup)] {
        let mut host_ports = BTreeSet::new();
        for name in running.iter() {
            for (host, _) in published(service(name)) {
                assert!(
                    host_ports.insert(host),
                    "{setup}: host port {host} is published twice ({name})"
                );
            }
        }
    }
    // What the cluster leaves out cannot run beside it by mistake: each of its host ports
    // is one of the cluster's (and bots find the cluster where they found the single arena).
    let cluster_ports: BTreeSet<u16> = cluster
        .iter()
        .flat_map(|name| published(service(name)))
        .map(|(host, _)| host)
        .collect();
    for name in &left_out {
        for (host, _) in published(service(name)) {
            assert!(
                cluster_ports.contains(&host),
                "{name}'s host port {host} is one of the cluster's"
            );
        }
    }

    // Prometheus scrapes exactly the arenas that run: its configuration file is chosen in
    // deploy/.env (prometheus.yml by default, the one deploy/.env.example shows for the
    // cluster), so that KnobelArenaDown fires for an arena that is down and for no other.
    let prometheus = service("prometheus");
    let config_arg = strings(&prometheus["command"])
        .into_iter()
        .find_map(|a| a.strip_prefix("--config.file=/etc/prometheus/"))
        .expect("prometheus --config.file");
    assert_eq!(
        interpolated(config_arg),
        BTreeSet::from(["KNOBEL_PROMETHEUS_CONFIG".to_owned()]),
        "{config_arg}"
    );
    let single_config = config_arg
        .strip_prefix("${KNOBEL_PROMETHEUS_CONFIG:-")
        .and_then(|rest| rest.strip_suffix('}'))
        .unwrap_or_else(|| panic!("{config_arg}: a default configuration"));
    let cluster_config = commented("KNOBEL_PROMETHEUS_CONFIG");
    let mounts: Vec<&str> = strings(&prometheus["volumes"]);
    for (setup, running, config) in [
        ("single", &single_setup, single_config),
        ("cluster", &cluster_setup, cluster_config),
    ] {
        assert!(
            mounts.contains(&format!("./prometheus/{config}:/etc/prometheus/{config}:ro").as_str()),
            "{setup}: {config} is mounted: {mounts:?}"
        );
        let expected: BTreeSet<String> = running
            .iter()
            .filter(|name| service(name)["image"].as_str() == Some(image))
            .map(|name| format!("{name}:{metrics}"))
            .collect();
        assert_eq!(
            arena_targets(config),
            expected,
            "{setup}: {config} scrapes the arenas that run"
        );
    }
    // The cluster's configuration is the single one's but for the targets.
    let without_targets = |file: &str| {
        let mut config = yaml(&deploy().join("prometheus").join(file));
        for scrape in config["scrape_configs"].as_sequence_mut().unwrap() {
            scrape["static_configs"] = Value::Null;
        }
        config
    };
    assert_eq!(
        without_targets(cluster_config),
        without_targets(single_config),
        "{cluster_config} differs from {single_config} in more than the targets"
    );
}

/// The manifests in `dir` (its `.yaml` files, not its folders), each checked to name its
/// apiVersion, kind and name.
fn manifests(dir: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let mut objects = Vec::new();
    for file in &files {
        let name = file.display();
        assert!(
            name.to_string().ends_with(".yaml"),
            "{name}: `kubectl apply -f` takes every file in the folder, so every file is a manifest"
        );
        for doc in yaml_documents(file) {
            assert!(doc["apiVersion"].as_str().is_some(), "{name}: apiVersion");
            assert!(doc["kind"].as_str().is_some(), "{name}: kind");
            assert!(doc["metadata"]["name"].as_str().is_some(), "{name}: name");
            objects.push(doc);
        }
    }
    objects
}

/// The one object of `kind` in `objects`.
fn find_kind<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    let mut found = objects.iter().filter(|o| o["kind"].as_str() == Some(kind));
    let object = found.next().unwrap_or_else(|| panic!("no {kind}"));
    assert!(found.next().is_none(), "one {kind}");
    object
}

/// The object of `kind` named `name` in `objects`.
fn find_named<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"].as_str() == Some(kind) && o["metadata"]["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// Cluster mode's objects agree with the arena's: the ConfigMap names the NATS Service and
/// the peer port; the peer port is the container's, not in the Service, and admitted from
/// arena pods only.
fn cluster_mode(objects: &[Value], config: &Value, container: &Value, labels: &Value) {
    let nats = find_named(objects, "Service", "knobel-nats");
    let nats_port = nats["spec"]["ports"][0]["port"].as_u64().unwrap();
    assert_eq!(
        str_at(config, "data.KNOBEL_NATS_URL"),
        format!("nats://knobel-nats:{nats_port}")
    );
    let nats_deployment = find_named(objects, "Deployment", "knobel-nats");
    assert_eq!(
        &nats_deployment["spec"]["template"]["metadata"]["labels"],
        &nats["spec"]["selector"]
    );
    let peer = container["ports"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|p| p["name"].as_str() == Some("peer"))
        .and_then(|p| p["containerPort"].as_u64())
        .expect("the container's peer port");
    assert_eq!(
        port_of(str_at(config, "data.KNOBEL_PEER_LISTEN")) as u64,
        peer
    );
    let arena = find_named(objects, "Service", "knobel-arena");
    let in_service = arena["spec"]["ports"].as_sequence().unwrap();
    assert!(
        in_service
            .iter()
            .all(|p| p["targetPort"].as_str() != Some("peer"))
    );
    let policy = find_kind(objects, "NetworkPolicy");
    assert_eq!(&policy["spec"]["podSelector"]["matchLabels"], labels);
    for rule in policy["spec"]["ingress"].as_sequence().unwrap() {
        let ports: Vec<&str> = rule["ports"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|p| str_at(p, "port"))
            .collect();
        if ports.contains(&"peer") {
            assert_eq!(ports, ["peer"], "the peer port has a rule of its own");
            assert_eq!(&rule["from"][0]["podSelector"]["matchLabels"], labels);
            assert_eq!(rule["from"].as_sequence().unwrap().len(), 1);
        }
    }
}

/// The `prometheus.io/*` annotations of the object or pod template metadata `metadata`.
fn scrape_annotations(metadata: &Value) -> Vec<&str> {
    metadata["annotations"]
        .as_mapping()
        .into_iter()
        .flatten()
        .filter_map(|(key, _)| key.as_str())
        .filter(|key| key.starts_with("prometheus.io/"))
        .collect()
}

/// The Kubernetes manifests: deploy/k8s/ (the arena, `kubectl apply -f deploy/k8s/`) and
/// deploy/k8s/monitoring/ (the Prometheus Operator's PodMonitor, applied where it runs).
fn kubernetes() -> (Vec<Value>, Vec<Value>) {
    let dir = deploy().join("k8s");
    let folders: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(folders, BTreeSet::from(["monitoring".to_owned()]));
    (manifests(&dir), manifests(&dir.join("monitoring")))
}

#[test]
fn the_kubernetes_manifests_agree_with_each_other_and_the_image() {
    let (objects, monitoring) = kubernetes();
    let find = |kind: &str| find_kind(&objects, kind);
    let deployment = find_named(&objects, "Deployment", "knobel-arena");
    let service = find_named(&objects, "Service", "knobel-arena");
    let config = find("ConfigMap");
    let pdb = find("PodDisruptionBudget");
    assert!(
        objects.iter().all(|o| o["kind"].as_str() != Some("Secret")),
        "secrets are referenced, never committed"
    );
    let pod = &deployment["spec"]["template"];
    let labels = &pod["metadata"]["labels"];
    assert_eq!(&deployment["spec"]["selector"]["matchLabels"], labels);
    assert_eq!(&service["spec"]["selector"], labels);
    assert_eq!(&pdb["spec"]["selector"]["matchLabels"], labels);
    let container = &pod["spec"]["containers"][0];
    // The image is the one compose builds.
    let compose = yaml(&deploy().join("compose.yaml"));
    assert_eq!(
        container["image"], compose["services"]["arena"]["image"],
        "the image compose builds"
    );
    assert_eq!(
        pod["spec"]["securityContext"]["runAsNonRoot"].as_bool(),
        Some(true)
    );
    let port = |name: &str| {
        container["ports"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|p| p["name"].as_str() == Some(name))
            .and_then(|p| p["containerPort"].as_u64())
            .unwrap_or_else(|| panic!("container port {name}"))
    };
    let (grpc, metrics, web) = (port("grpc"), port("metrics"), port("web"));
    assert_eq!(
        (grpc, metrics, web),
        (50051, 9464, 8080),
        "the ports the image exposes"
    );
    assert_eq!(
        (grpc, metrics),
        (50051, 9464),
        "the ports the image exposes"
    );
    // The ConfigMap makes the arena listen on those ports, with variables it reads.
    let known = arena_variables();
    for (key, value) in config["data"].as_mapping().unwrap() {
        let key = key.as_str().unwrap();
        assert!(known.contains(key), "the arena does not read {key}");
        assert!(
            value.as_str().is_some(),
            "{key}: ConfigMap values are strings"
        );
    }
    assert_eq!(port_of(str_at(config, "data.KNOBEL_LISTEN")) as u64, grpc);
    assert_eq!(
        port_of(str_at(config, "data.KNOBEL_METRICS_LISTEN")) as u64,
        metrics
    );
    assert_eq!(
        port_of(str_at(config, "data.KNOBEL_WEB_LISTEN")) as u64,
        web
    );
    assert_eq!(
        str_at(container, "envFrom.0.configMapRef.name"),
        str_at(config, "metadata.name")
    );
    // Secrets by reference, for variables the arena reads; the pod's own address (for the
    // advertised peer address) from the downward API.
    let mut secret_keys = BTreeSet::new();
    for var in container["env"].as_sequence().unwrap() {
        let name = str_at(var, "name");
        if name == "POD_IP" {
            assert_eq!(str_at(var, "valueFrom.fieldRef.fieldPath"), "status.podIP");
            continue;
        }
        assert!(known.contains(name), "the arena does not read {name}");
        if name == "KNOBEL_PEER_ADVERTISE" {
            assert_eq!(str_at(var, "value"), format!("$(POD_IP):{}", port("peer")));
            continue;
        }
        let secret = &var["valueFrom"]["secretKeyRef"];
        secret_keys.insert((str_at(secret, "name"), str_at(secret, "key")));
    }
    cluster_mode(&objects, config, container, labels);
    let operations = read(&workspace().join("docs/operations.md"));
    for (secret, key) in &secret_keys {
        assert!(
            operations.contains(&format!("kubectl create secret generic {secret}"))
                && operations.contains(&format!("--from-literal={key}=")),
            "docs/operations.md tells how to create secret {secret} with key {key}"
        );
    }
    // Probes on gRPC health, the service's target ports are the container's.
    for probe in ["readinessProbe", "livenessProbe"] {
        assert_eq!(
            container[probe]["grpc"]["port"].as_u64(),
            Some(grpc),
            "{probe}"
        );
    }
    // The Service lists the grpc, metrics and web ports, each where the container listens.
    let service_ports: Vec<(&str, u64, &str)> = service["spec"]["ports"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|p| {
            (
                str_at(p, "name"),
                p["port"].as_u64().unwrap(),
                str_at(p, "targetPort"),
            )
        })
        .collect();
    assert_eq!(
        service_ports,
        [
            ("grpc", grpc, "grpc"),
            ("metrics", metrics, "metrics"),
            ("web", web, "web")
        ],
        "the Service's ports"
    );
    // Only the pods carry scrape annotations: were the Service annotated too, the usual
    // Kubernetes scrape jobs (pods, and service endpoints) would scrape each pod twice.
    for object in objects.iter().chain(&monitoring) {
        assert_eq!(
            scrape_annotations(&object["metadata"]),
            Vec::<&str>::new(),
            "{} {}: only the pods carry prometheus.io annotations",
            str_at(object, "kind"),
            str_at(object, "metadata.name")
        );
    }
    assert_eq!(
        scrape_annotations(&pod["metadata"]).len(),
        3,
        "the pods carry scrape, port and path"
    );
    // Scrape annotations name the metrics port and path.
    let annotations = &pod["metadata"]["annotations"];
    assert_eq!(annotations["prometheus.io/scrape"].as_str(), Some("true"));
    assert_eq!(
        annotations["prometheus.io/port"].as_str(),
        Some(metrics.to_string().as_str())
    );
    assert_eq!(annotations["prometheus.io/path"].as_str(), Some("/metrics"));
    assert!(pdb["spec"]["minAvailable"].as_u64().is_some());

    // The PodMonitor scrapes the pods' metrics port, at the annotations' path.
    let pod_monitor = find_kind(&monitoring, "PodMonitor");
    assert_eq!(&pod_monitor["spec"]["selector"]["matchLabels"], labels);
    let endpoint = &pod_monitor["spec"]["podMetricsEndpoints"][0];
    assert_eq!(port(str_at(endpoint, "port")), metrics);
    assert_eq!(str_at(endpoint, "path"), "/metrics");

    // Kubernetes' schemas: every object of deploy/k8s/ is valid, with no field the schema
    // does not know (the Prometheus Operator's PodMonitor has none there: it is checked
    // above).
    if let Some(validator) = schema_validator() {
        let files = yaml_files(&deploy().join("k8s"));
        let output = validate_schemas(&validator, &files);
        assert!(output.status.success(), "kubernetes-validate: {output:?}");
    }

    // kubectl: `apply --dry-run=client` passes on each folder, against a stand-in API server
    // (kube_api/mod.rs says what it serves, and why without validation), and says of every
    // object that it would be created.
    match Command::new("kubectl")
        .args(["version", "--client"])
        .output()
    {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            assert!(
                !knobel_e2e::postgres::in_ci(),
                "kubectl is missing: CI runs the dry run (.ci/run installs Debian's \
                 kubernetes-client where there is no kubectl)"
            );
            eprintln!("kubectl is not installed: apply --dry-run=client not run");
        }
        installed => {
            let installed = installed.expect("run kubectl version --client");
            assert!(installed.status.success(), "kubectl version: {installed:?}");
            // deploy/k8s/ applies to any cluster; monitoring/ needs the Prometheus Operator.
            let dir = deploy().join("k8s");
            kubectl_dry_run(&dir, &objects, false);
            kubectl_dry_run(&dir.join("monitoring"), &monitoring, true);
        }
    }
}

/// The Kubernetes version whose schemas the manifests are checked against (the stand-in API
/// server's, kube_api/).
const KUBERNETES_VERSION: &str = "1.32.0";

/// `kubernetes-validate` (PyPI): `KNOBEL_KUBERNETES_VALIDATE`, else the one on the PATH;
/// `None` where there is none (outside CI only: .ci/run installs it, and CI must run it).
fn schema_validator() -> Option<PathBuf> {
    let validator = std::env::var_os("KNOBEL_KUBERNETES_VALIDATE")
        .map_or_else(|| PathBuf::from("kubernetes-validate"), PathBuf::from);
    match Command::new(&validator).arg("--version").output() {
        Ok(output) if output.status.success() => Some(validator),
        other => {
            assert!(
                !knobel_e2e::postgres::in_ci(),
                "{} does not run ({other:?}): CI checks the manifests against Kubernetes' \
                 schemas (.ci/run installs kubernetes-validate from PyPI)",
                validator.display()
            );
            eprintln!("kubernetes-validate is not installed: the schemas are not checked");
            None
        }
    }
}

/// `validator --strict` on `files`, against [`KUBERNETES_VERSION`].
fn validate_schemas(validator: &Path, files: &[PathBuf]) -> std::process::Output {
    Command::new(validator)
        .args(["--strict", "--no-warn", "-k", KUBERNETES_VERSION])
        .args(files)
        .output()
        .expect("run kubernetes-validate")
}

/// The YAML files of `dir` (not of its subfolders).
fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no manifests in {}", dir.display());
    files
}

/// The schema check has teeth: a manifest with a misspelt field, or a value of the wrong
/// type, is refused, naming it.
#[test]
fn the_schema_check_refuses_a_misspelt_field_and_a_wrong_type() {
    let Some(validator) = schema_validator() else {
        return;
    };
    let deployment = read(&deploy().join("k8s/deployment.yaml"));
    let dir = tempfile::tempdir().unwrap();
    for (from, to, says) in [
        ("replicas:", "replicaz:", "replicaz"),
        ("containerPort: ", "containerPort: port-", "port-"),
    ] {
        assert!(deployment.contains(from), "deployment.yaml has {from}");
        let file = dir.path().join("deployment.yaml");
        std::fs::write(&file, deployment.replacen(from, to, 1)).unwrap();
        let output = validate_schemas(&validator, &[file]);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            !output.status.success() && text.contains(says),
            "{to}: {text}"
        );
    }
}

/// `kubectl apply --dry-run=client -f dir` against a stand-in API server (of a cluster with
/// the Prometheus Operator if `operator`): it succeeds, and prints one "created (dry run)"
/// line per object, as kubectl names them.
fn kubectl_dry_run(dir: &Path, objects: &[Value], operator: bool) {
    let api = kube_api::KubeApi::start(operator);
    let home = tempfile::tempdir().unwrap();
    let kubeconfig = home.path().join("kubeconfig");
    std::fs::write(&kubeconfig, api.kubeconfig()).unwrap();
    let output = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--cache-dir")
        .arg(home.path().join("cache"))
        .args([
            "--request-timeout=60s",
            "apply",
            "--dry-run=client",
            "--validate=false",
            "-f",
        ])
        .arg(dir)
        .env_remove("KUBECONFIG")
        .output()
        .expect("run kubectl apply");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "kubectl apply --dry-run=client -f {}: {output:?}\nrequests: {:?}",
        dir.display(),
        api.requests()
    );
    let mut printed: Vec<&str> = stdout.lines().collect();
    printed.sort();
    let mut expected: Vec<String> = objects
        .iter()
        .map(|o| {
            // kubectl names an object kind.group/name, the kind in lower case.
            let kind = str_at(o, "kind").to_lowercase();
            let group = match str_at(o, "apiVersion").rsplit_once('/') {
                Some((group, _)) => format!(".{group}"),
                None => String::new(),
            };
            format!(
                "{kind}{group}/{} created (dry run)",
                str_at(o, "metadata.name")
            )
        })
        .collect();
    expected.sort();
    assert_eq!(printed, expected, "{}", dir.display());
    // It read discovery and looked for each object; it wrote nothing.
    let requests = api.requests();
    assert!(
        requests.iter().all(|r| r.starts_with("GET ")),
        "{requests:?}"
    );
    assert!(requests.contains(&"GET /apis".to_owned()), "{requests:?}");
}

/// The jobs the alert rules select (`job="..."`).
fn alert_jobs() -> BTreeSet<String> {
    let alerts = yaml(&deploy().join("prometheus/alerts.yml"));
    let mut jobs = BTreeSet::new();
    for group in alerts["groups"].as_sequence().unwrap() {
        for rule in group["rules"].as_sequence().unwrap() {
            let expr = str_at(rule, "expr");
            for rest in expr.split("job=\"").skip(1) {
                jobs.insert(rest.split('"').next().unwrap().to_owned());
            }
        }
    }
    jobs
}

#[test]
fn every_supplied_scrape_config_has_the_job_the_alerts_select() {
    let jobs = alert_jobs();
    assert!(
        jobs.contains("knobel-arena"),
        "KnobelArenaDown selects the arena's job: {jobs:?}"
    );
    // Prometheus configs (deploy/prometheus/, compose's): the jobs as named, none relabelled.
    let mut configs = 0;
    for entry in std::fs::read_dir(deploy().join("prometheus")).unwrap() {
        let path = entry.unwrap().path();
        let config = yaml(&path);
        let Some(scrape_configs) = config["scrape_configs"].as_sequence() else {
            continue;
        };
        configs += 1;
        let mut names = BTreeSet::new();
        for scrape in scrape_configs {
            for relabel in scrape["relabel_configs"]
                .as_sequence()
                .into_iter()
                .flatten()
            {
                assert_ne!(relabel["target_label"].as_str(), Some("job"), "{scrape:?}");
            }
            names.insert(str_at(scrape, "job_name"));
        }
        for job in &jobs {
            assert!(
                names.contains(job.as_str()),
                "{} has no job {job}: {names:?}",
                path.display()
            );
        }
    }
    assert!(
        configs >= 1,
        "deploy/prometheus/prometheus.yml has scrape_configs"
    );
    // Kubernetes (the Prometheus Operator): each PodMonitor's job is the value of the pod
    // label its jobLabel names.
    let (objects, monitoring) = kubernetes();
    let pod_labels = &find_named(&objects, "Deployment", "knobel-arena")["spec"]["template"]["metadata"]
        ["labels"];
    assert!(!monitoring.is_empty());
    for pod_monitor in &monitoring {
        assert_eq!(
            str_at(pod_monitor, "kind"),
            "PodMonitor",
            "a kind of scrape config this test does not check yet"
        );
        let job_label = str_at(pod_monitor, "spec.jobLabel");
        let job = pod_labels[job_label]
            .as_str()
            .unwrap_or_else(|| panic!("the pods have no label {job_label}: {pod_labels:?}"));
        for endpoint in pod_monitor["spec"]["podMetricsEndpoints"]
            .as_sequence()
            .unwrap()
        {
            for relabel in endpoint["relabelings"].as_sequence().into_iter().flatten() {
                assert_ne!(relabel["targetLabel"].as_str(), Some("job"), "{relabel:?}");
            }
        }
        assert_eq!(
            BTreeSet::from([job.to_owned()]),
            jobs,
            "the PodMonitor's job is the alerts' job"
        );
    }
}

/// `promtool` (Debian's `prometheus` package; `.ci/run` installs it) with `args`.
fn promtool(args: &[&str]) -> std::process::Output {
    Command::new("promtool")
        .args(args)
        .current_dir(deploy().join("prometheus"))
        .output()
        .expect("promtool is missing: install Debian's prometheus package (apt-get install prometheus), or build with KNOBEL_TEST_WITHOUT=prometheus")
}

#[test]
#[cfg_attr(
    knobel_without_prometheus,
    ignore = "KNOBEL_TEST_WITHOUT=prometheus: promtool is not installed"
)]
fn promtool_accepts_the_config_and_rules_and_the_alerts_fire_in_its_unit_tests() {
    for args in [
        &["check", "config", "prometheus.yml"][..],
        &["check", "config", "prometheus-cluster.yml"],
        &["check", "rules", "recording.yml", "alerts.yml"],
        &["test", "rules", "tests.yml"],
    ] {
        let output = promtool(args);
        assert!(
            output.status.success(),
            "promtool {args:?}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
