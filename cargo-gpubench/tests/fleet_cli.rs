//! `cargo gpubench fleet`, `health` and `--device` end to end without a GPU, and the deploy
//! recipes (Slurm scripts, Kubernetes YAML) checked for what the README promises.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CARD3: &str = "GPU-df5b3884-f54a-2124-4ed3-bcfdc14ff990";
const ARCHIVE_CMD: &str = "gpubench-archive/bin/cargo-gpubench --archive gpubench-archive";

fn cli(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-gpubench")).args(args).output().expect("the CLI starts")
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn tarballs() -> Vec<String> {
    (1..=3)
        .map(|s| repo().join(format!("tests/fixtures/recorded/h200-aa/set{s}-runs.tar.xz")).display().to_string())
        .collect()
}

/// The repository's configuration (policy only: the defaults).
fn config_of_the_runs() -> String {
    repo().join("gpubench.toml").display().to_string()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn has_gpu_driver() -> bool {
    ["/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1"].iter().any(|p| Path::new(p).exists())
}

/// The recorded default-profile runs written as a fleet folder, `<dir>/node<set>/r<i>.json`,
/// with card 3's DRAM bandwidth 20 % lower.
fn planted_fleet(dir: &Path) {
    let loaded = gpubench::fleet::load(&tarballs().iter().map(PathBuf::from).collect::<Vec<_>>()).unwrap();
    for (i, r) in loaded.runs.iter().enumerate().filter(|(_, r)| r.doc.settings.profile == "default") {
        let mut doc = r.doc.clone();
        if doc.gpu.uuid == CARD3 {
            for b in doc.benchmarks.iter_mut().filter(|b| b.id.starts_with("dram/")) {
                for m in b.metrics.iter_mut().filter(|m| m.name == "bandwidth") {
                    m.samples.iter_mut().for_each(|v| *v *= 0.8);
                    m.summary = gpubench::results::Summary::of(&m.samples);
                }
            }
        }
        let host = r.host.as_deref().unwrap().replace("set", "node").replace("-runs", "");
        doc.write(&dir.join(host).join(format!("r{i}.json"))).unwrap();
    }
}

/// The three recorded cards as they are: the card of set 2 reads CAS of a whole warp on one
/// word 13 % below the two others, in every run, and is named; the others are not.
#[test]
fn fleet_over_the_three_recorded_cards_names_the_one_slow_on_warp_cas() {
    let tars = tarballs();
    let config = config_of_the_runs();
    let args: Vec<&str> = ["fleet", "--config", &config].into_iter().chain(tars.iter().map(String::as_str)).collect();
    let o = cli(&args);
    assert_eq!(o.status.code(), Some(gpubench::error::exit::OUTLIER), "{}", err(&o));
    let text = out(&o);
    assert!(text.contains("(default profile): 3 cards, 301 metrics"), "{text}");
    assert!(text.contains("1 outlier cards, 0 failed nodes"), "{text}");
    let row = text.lines().find(|l| l.contains("OUTLIER")).unwrap();
    assert!(row.contains("GPU-1bbcf8a4") && row.contains("atomics/cas:warp_contended"), "{row}");
}

#[test]
fn fleet_names_a_slow_card_writes_every_report_and_exits_with_the_outlier_code() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet");
    planted_fleet(&fleet);
    let (md, xml, svg, base) =
        (dir.path().join("f.md"), dir.path().join("f.xml"), dir.path().join("plots"), dir.path().join("class.json"));
    let p = |x: &Path| x.display().to_string();
    let o = cli(&[
        "fleet",
        "--config",
        &config_of_the_runs(),
        &p(&fleet),
        "--drain-commands",
        "--markdown",
        &p(&md),
        "--junit",
        &p(&xml),
        "--svg",
        &p(&svg),
    ]);
    assert_eq!(o.status.code(), Some(gpubench::error::exit::OUTLIER), "{}", err(&o));
    let text = out(&o);
    assert!(text.contains(CARD3) && text.contains("OUTLIER") && text.contains("dram/"), "{text}");
    assert!(
        text.contains("scontrol update 'nodename=node3' state=drain 'reason=gpubench: outlier GPU-df5b3884"),
        "{text}"
    );
    // The card of set 2, slow on warp CAS as recorded, is named too.
    assert_eq!(text.matches("scontrol update").count(), 2, "{text}");
    assert!(std::fs::read_to_string(&md).unwrap().contains(CARD3));
    assert!(std::fs::read_to_string(&xml).unwrap().contains("failures=\"2\""));
    assert_eq!(std::fs::read_dir(&svg).unwrap().count(), 1);
    // JSON output and a class baseline from cards 2 and 3 (set 1 predates a schema change).
    std::fs::remove_dir_all(fleet.join("node1")).unwrap();
    let o = cli(&["fleet", "--config", &config_of_the_runs(), &p(&fleet), "--json", "--save-envelope", &p(&base)]);
    assert_eq!(o.status.code(), Some(0), "two cards are too few to judge: {}", err(&o));
    let json: serde_json::Value = serde_json::from_str(&out(&o)).unwrap();
    assert_eq!(json["groups"][0]["judged"], false);
    let b = gpubench::baseline::Baseline::read(&base).unwrap();
    assert_eq!(b.runs.len(), 12);
}

#[test]
fn fleet_refuses_bad_input_with_one_line_and_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"schema\":\"gpubench.results/1\"").unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let cases: [(&[&str], i32); 4] = [
        (&["fleet", "/nonexistent/fleet"], 5),
        (&["fleet", bad.to_str().unwrap()], 5),
        (&["fleet", empty.to_str().unwrap()], 2),
        (&["fleet", empty.to_str().unwrap(), "--z-limit", "0"], 2),
    ];
    for (args, code) in cases {
        let o = cli(args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", err(&o));
        assert_eq!(err(&o).lines().count(), 1, "{args:?}: {}", err(&o));
        assert!(!err(&o).contains("panicked"));
    }
}

#[test]
fn device_selections_are_checked_before_anything_runs() {
    for (args, code, text) in [
        (&["--device", "gpu1"][..], 2, "is not a GPU selection"),
        (&["--device", "0,0"], 2, "listed twice"),
        (&["--device", "all", "--save-baseline"], 2, "fleet DIR --save-envelope"),
        (&["--device", "0,1", "--junit", "x.xml"], 2, "--junit"),
    ] {
        let o = cli(args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", err(&o));
        assert!(err(&o).contains(text), "{args:?}: {}", err(&o));
    }
    if has_gpu_driver() {
        println!("skipping the no-GPU checks: this machine has a CUDA driver");
        return;
    }
    for args in [&["--device", "all"][..], &["--device", "0,2,5"], &["health"]] {
        let o = cli(args);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {}", err(&o));
        let both = format!("{}{}", out(&o), err(&o));
        assert_eq!(both.lines().count(), 1, "{args:?}: {both}");
        assert!(both.contains("no CUDA driver"), "{both}");
    }
}

fn c_image(spec: &serde_yaml::Value) -> &str {
    spec["containers"][0]["image"].as_str().unwrap()
}

fn yaml_docs(name: &str) -> Vec<serde_yaml::Value> {
    let text = std::fs::read_to_string(repo().join("deploy/kubernetes").join(name)).unwrap();
    serde_yaml::Deserializer::from_str(&text).map(|d| serde::Deserialize::deserialize(d).unwrap()).collect()
}

/// Whether a pod spec tolerates the `nvidia.com/gpu` NoSchedule taint GPU nodes commonly carry.
fn tolerates_gpu_taint(spec: &serde_yaml::Value) -> bool {
    spec["tolerations"].as_sequence().is_some_and(|ts| {
        ts.iter().any(|t| {
            t["key"] == "nvidia.com/gpu"
                && t["effect"] == "NoSchedule"
                && (t["operator"] == "Exists" || t["operator"].is_null() && t["value"].is_string())
        })
    })
}

#[test]
fn kubernetes_job_runs_the_readme_archive_command_on_every_gpu_node() {
    let docs = std::fs::read_to_string(repo().join("docs/src/fleets.md")).unwrap();
    assert!(docs.contains(ARCHIVE_CMD), "the fleet chapter's archive command changed");
    let docs = yaml_docs("gpubench-job.yaml");
    assert_eq!(docs.len(), 2);
    let job = &docs[0];
    assert_eq!(job["kind"], "Job");
    let spec = &job["spec"]["template"]["spec"];
    assert_eq!(spec["nodeSelector"]["nvidia.com/gpu.present"], "true");
    assert!(tolerates_gpu_taint(spec), "the GPU pods tolerate the nvidia.com/gpu taint");
    assert_eq!(c_image(spec), "registry.example.com/gpubench-archive:latest");
    assert_eq!(spec["containers"][0]["command"][0], "/bin/sh");
    assert_eq!(
        spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"],
        "kubernetes.io/hostname"
    );
    let c = &spec["containers"][0];
    assert!(c["resources"]["limits"]["nvidia.com/gpu"].as_u64().unwrap() >= 1);
    let args = c["args"][0].as_str().unwrap();
    assert!(
        args.contains(ARCHIVE_CMD) && args.contains("--device all") && args.contains("/results/$NODE_NAME"),
        "{args}"
    );
    assert_eq!(c["volumeMounts"][0]["mountPath"], "/results");
    let fleet = docs[1]["spec"]["template"]["spec"]["containers"][0]["args"][0].as_str().unwrap();
    assert!(fleet.contains("cargo-gpubench fleet /results"), "{fleet}");
}

#[test]
fn kubernetes_health_check_labels_and_taints_a_failing_node() {
    let docs = yaml_docs("gpubench-health.yaml");
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet"]);
    let verbs = &docs[1]["rules"][0]["verbs"];
    assert!(verbs.as_sequence().unwrap().iter().any(|v| v == "patch"));
    let script = docs[3]["spec"]["template"]["spec"]["containers"][0]["args"][0].as_str().unwrap();
    assert!(script.contains("gpubench-archive/bin/cargo-gpubench health --archive gpubench-archive"), "{script}");
    assert!(script.contains("kubectl taint node \"$NODE_NAME\" gpubench.io/unhealthy=gpu:NoSchedule"));
    assert!(script.contains("gpubench.io/health=fail"));
}

#[test]
fn kubernetes_health_check_fits_any_node_and_holds_no_gpu_while_idle() {
    let docs = yaml_docs("gpubench-health.yaml");
    let pod = &docs[3]["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    // The DaemonSet's own pod requests no GPU: it schedules on a node of any size and holds
    // nothing while it sleeps.
    let resources = serde_yaml::to_string(&container["resources"]).unwrap();
    assert!(!resources.contains("nvidia.com/gpu"), "{resources}");
    assert!(tolerates_gpu_taint(pod), "the scheduler pod runs on tainted GPU nodes too");
    let script = container["args"][0].as_str().unwrap();
    // Each pass: a Job pinned to the node that requests what the node has, then released.
    assert!(script.contains("jsonpath='{.status.allocatable.nvidia\\.com/gpu}'"), "{script}");
    let manifest = &script[script.find("<<EOF").unwrap() + 6..script.find("\nEOF").unwrap()];
    let manifest = manifest
        .replace("$job", "gpubench-health-n1-1")
        .replace("$CHECK_WAIT_S", "1800")
        .replace("\"$NODE_NAME\"", "n1")
        .replace("$IMAGE", "img")
        .replace("$gpus", "4");
    let job: serde_yaml::Value = serde_yaml::from_str(&manifest).unwrap();
    assert_eq!(job["kind"], "Job");
    let spec = &job["spec"]["template"]["spec"];
    assert_eq!(spec["nodeSelector"]["kubernetes.io/hostname"], "n1");
    assert_eq!(spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], 4);
    assert!(tolerates_gpu_taint(spec), "the check's Job tolerates the nvidia.com/gpu taint");
    assert_eq!(c_image(spec), "img");
    let command = spec["containers"][0]["command"].as_sequence().unwrap();
    assert!(command[2].as_str().unwrap().contains("cargo-gpubench health --archive gpubench-archive"));
    assert_eq!(job["spec"]["activeDeadlineSeconds"], 1800);
    let rules = serde_yaml::to_string(&docs[1]["rules"]).unwrap();
    assert!(rules.contains("jobs") && rules.contains("create") && rules.contains("pods/log"), "{rules}");
    assert!(repo().join("deploy/README.md").is_file());
}

#[test]
fn slurm_scripts_parse_and_use_the_archive_on_every_gpu() {
    let dir = repo().join("deploy/slurm");
    for f in ["gpubench-node.sh", "gpubench-nodes.sbatch", "gpubench-fleet.sbatch", "submit.sh", "health-check.sh"] {
        let o = Command::new("bash").arg("-n").arg(dir.join(f)).output().unwrap();
        assert!(o.status.success(), "{f}: {}", err(&o));
    }
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    assert!(read("gpubench-node.sh").contains("--archive \"$archive\" --device all -o \"$out\""));
    let gpu_job = read("gpubench-nodes.sbatch");
    assert!(gpu_job.contains("#SBATCH --gres=gpu:") && gpu_job.contains("#SBATCH --ntasks-per-node=1"));
    // One job of whole nodes, one task per node: no two runs on one node.
    assert!(!gpu_job.contains("--array") && gpu_job.contains("srun ") && gpu_job.contains("--ntasks-per-node=1"));
    let submit = read("submit.sh");
    assert!(submit.contains("--dependency=afterany:") && submit.contains("--nodes=\"$nodes\" --ntasks-per-node=1"));
    assert!(!submit.contains("--array"));
    assert!(read("gpubench-fleet.sbatch").contains("fleet \"$shared\" --drain-commands"));
    assert!(read("health-check.sh").contains("health --drain"));
    assert!(read("slurm.conf.example").contains("HealthCheckProgram="));
}
