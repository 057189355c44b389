//! A stand-in for a Kubernetes API server, enough for `kubectl apply --dry-run=client`.
//!
//! A client-side dry run sends nothing to be created, but kubectl still asks the server
//! (found by trying kubectl v1.32 against a server answering 404 to everything): `/version`;
//! the discovery documents `/api`, `/apis` and `/api/v1`, `/apis/GROUP/VERSION` to map each
//! manifest's kind to a resource (and whether it is namespaced); then a GET of each object,
//! to diff against what is there. This server answers discovery for the kinds Kubernetes
//! v1.32 serves in the groups the manifests use (and, if asked to stand for a cluster with
//! the Prometheus Operator, the operator's), and "not found" for every object, so kubectl
//! reports each one as "created (dry run)". It refuses any other method than GET: a
//! client-side dry run must not write.
//!
//! It serves no OpenAPI documents (`/openapi/v3`, `/openapi/v2`), which kubectl fetches to
//! validate fields: those are the API server's own generated schemas of every type, which
//! are not on this machine nor in the repository, and schemas made up here would check
//! nothing. The dry run therefore runs with `--validate=false`; the test asserts the fields
//! it depends on itself.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// A resource: its plural name, its kind, and whether it is namespaced.
type Resource = (&'static str, &'static str, bool);

/// The resources served per group version: the kinds of Kubernetes v1.32 in these groups
/// that deploy files might use, and the Prometheus Operator's custom resources (the last,
/// `OPERATOR`).
const RESOURCES: &[(&str, &[Resource])] = &[
    (
        "v1",
        &[
            ("configmaps", "ConfigMap", true),
            ("namespaces", "Namespace", false),
            ("persistentvolumeclaims", "PersistentVolumeClaim", true),
            ("pods", "Pod", true),
            ("secrets", "Secret", true),
            ("serviceaccounts", "ServiceAccount", true),
            ("services", "Service", true),
        ],
    ),
    (
        "apps/v1",
        &[
            ("daemonsets", "DaemonSet", true),
            ("deployments", "Deployment", true),
            ("replicasets", "ReplicaSet", true),
            ("statefulsets", "StatefulSet", true),
        ],
    ),
    (
        "policy/v1",
        &[("poddisruptionbudgets", "PodDisruptionBudget", true)],
    ),
    (
        "networking.k8s.io/v1",
        &[("networkpolicies", "NetworkPolicy", true)],
    ),
    (
        OPERATOR,
        &[
            ("podmonitors", "PodMonitor", true),
            ("prometheusrules", "PrometheusRule", true),
            ("servicemonitors", "ServiceMonitor", true),
        ],
    ),
];

/// The Prometheus Operator's group version.
const OPERATOR: &str = "monitoring.coreos.com/v1";

/// The discovery document at `path`, if it is one; the operator's group only with
/// `operator`.
fn discovery(path: &str, operator: bool) -> Option<Value> {
    let served = || {
        RESOURCES
            .iter()
            .filter(move |(gv, _)| operator || *gv != OPERATOR)
    };
    let resource_list = |group_version: &str| {
        served()
            .find(|(gv, _)| *gv == group_version)
            .map(|(gv, resources)| {
                let resources: Vec<Value> = resources
                    .iter()
                    .map(|(plural, kind, namespaced)| {
                        json!({
                            "name": plural,
                            "singularName": kind.to_lowercase(),
                            "namespaced": namespaced,
                            "kind": kind,
                            "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
                        })
                    })
                    .collect();
                json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources})
            })
    };
    match path {
        "/version" => Some(json!({"major": "1", "minor": "32", "gitVersion": "v1.32.0"})),
        "/api" => Some(json!({"kind": "APIVersions", "versions": ["v1"]})),
        "/apis" => {
            let groups: Vec<Value> = served()
                .filter_map(|(gv, _)| gv.split_once('/'))
                .map(|(group, version)| {
                    let gv =
                        json!({"groupVersion": format!("{group}/{version}"), "version": version});
                    json!({"name": group, "versions": [gv], "preferredVersion": gv})
                })
                .collect();
            Some(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
        }
        "/api/v1" => resource_list("v1"),
        _ => resource_list(path.strip_prefix("/apis/")?),
    }
}

/// The server: on 127.0.0.1, one connection at a time, until dropped.
pub struct KubeApi {
    addr: SocketAddr,
    /// Every request's method and path, in order.
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl KubeApi {
    /// A server for a cluster with only Kubernetes' own kinds or, with `operator`, the
    /// Prometheus Operator's too.
    pub fn start(operator: bool) -> KubeApi {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::spawn({
            let (requests, stop) = (requests.clone(), stop.clone());
            move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        answer(stream, &requests, operator);
                    }
                }
            }
        });
        KubeApi {
            addr,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    /// A kubeconfig whose current context is this server, namespace `default`.
    pub fn kubeconfig(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: knobel-test\n  cluster:\n    \
             server: http://{}\ncontexts:\n- name: knobel-test\n  context:\n    cluster: \
             knobel-test\n    user: knobel-test\n    namespace: default\ncurrent-context: \
             knobel-test\nusers:\n- name: knobel-test\n  user: {{}}\n",
            self.addr
        )
    }

    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for KubeApi {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which then sees `stop`.
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads one request (kubectl's are GETs without a body) and answers it, closing the
/// connection.
fn answer(mut stream: TcpStream, requests: &Mutex<Vec<String>>, operator: bool) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => break,
            Ok(_) if header.trim().is_empty() => break,
            Ok(_) => {}
        }
    }
    let mut words = request_line.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap();
    requests.lock().unwrap().push(format!("{method} {path}"));
    let status = |code: u16, reason: &str| {
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": format!("{method} {path}: {reason}"), "reason": reason, "code": code})
    };
    let (code, body) = match discovery(path, operator) {
        _ if method != "GET" => (405, status(405, "MethodNotAllowed")),
        Some(document) => (200, document),
        None => (404, status(404, "NotFound")),
    };
    let body = body.to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 {code} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        match code {
            200 => "OK",
            404 => "Not Found",
            _ => "Method Not Allowed",
        },
        body.len()
    );
}
