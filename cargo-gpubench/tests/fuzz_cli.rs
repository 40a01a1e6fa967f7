//! Every command that reads files, run as the binary on deterministic mutations of the
//! committed fixtures (truncations, bit flips, huge numbers, NaN spelled out, gzip bombs under
//! a lowered limit, archives, pipes, link loops): each run must end within 10 s with a
//! documented exit code, never a panic (101) or an abort (134), and an error is one line.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_cargo-gpubench");

struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn tar_gz(name: &str, bytes: &[u8]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(bytes.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    b.append_data(&mut h, name, bytes).unwrap();
    gz(&b.into_inner().unwrap())
}

fn mutate(bytes: &[u8], g: &mut Gen) -> Vec<u8> {
    let mut b = bytes.to_vec();
    match g.below(6) {
        0 => b.truncate(g.below(b.len())),
        1 => {
            for _ in 0..1 + g.below(16) {
                let i = g.below(b.len());
                b[i] ^= 1 << g.below(8);
            }
        }
        2 | 3 => {
            const SUBST: &[&str] = &["1e308", "-1e308", "1e400", "NaN", "\"NaN\"", "Infinity", "-0", "1e-320"];
            let Ok(text) = String::from_utf8(b.clone()) else { return gz(&b) };
            let mut out = String::new();
            let mut last = 0;
            let picked: Vec<usize> = text.match_indices(": ").map(|(i, _)| i).collect();
            let picked: Vec<usize> = picked.into_iter().filter(|_| g.below(40) == 0).collect();
            for i in picked {
                let start = i + 2;
                if !text[start..].starts_with(|c: char| c.is_ascii_digit()) || start < last {
                    continue;
                }
                let end = text[start..].find(|c: char| !(c.is_ascii_digit() || ".eE+-".contains(c))).unwrap() + start;
                out.push_str(&text[last..start]);
                out.push_str(SUBST[g.below(SUBST.len())]);
                last = end;
            }
            out.push_str(&text[last..]);
            b = out.into_bytes();
        }
        4 => b = gz(&b),
        _ => {
            let mut z = gz(&b);
            let i = 10 + g.below(z.len() - 10);
            z[i] ^= 0x21;
            b = z;
        }
    }
    b
}

/// Runs the CLI; panics when it does not end within 10 s, panics, aborts or gives an
/// undocumented code. Returns the exit code and stderr.
fn run(dir: &Path, args: &[&str]) -> (i32, String) {
    let mut child = Command::new(BIN)
        .arg("gpubench")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("GPUBENCH_MAX_DOCUMENT_BYTES", "4194304")
        .env("GPUBENCH_LOCK_DIR", dir.join(".locks"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`cargo gpubench {}` in {} did not finish within 10 s", args.join(" "), dir.display());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let err = reader.join().unwrap();
    let code = status.code().unwrap_or_else(|| panic!("{args:?} was killed by a signal ({status}): {err}"));
    let documented: Vec<i32> = gpubench::error::exit::TABLE.iter().map(|(c, _)| *c).collect();
    assert!(documented.contains(&code), "{args:?}: exit {code} is not documented: {err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{args:?}: {err}");
    let errors = err.lines().filter(|l| l.starts_with("error")).count();
    assert!(errors <= 1 || args[0] == "fleet", "{args:?}: more than one error line: {err}");
    (code, err)
}

/// The commands that read `file` (a name in `dir`).
fn commands(file: &str) -> Vec<Vec<String>> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    vec![
        s(&["report", file]),
        s(&["compare", file, file]),
        s(&["baseline", "save", file, "--baseline-dir", "bl", "--force"]),
        s(&["baseline", "show", file]),
        s(&["history", "import", "--db", "h.db", file]),
        s(&["fleet", file, "--drain-commands"]),
        s(&["calibrate", file]),
        s(&["chipmap", file, "--out", "maps"]),
    ]
}

#[test]
fn every_reading_command_survives_mutated_bombed_piped_and_linked_inputs() {
    let started = Instant::now();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let quick = std::fs::read(root.join("h200-quick-run.json")).unwrap();
    let sweeps = std::fs::read(root.join("dissect/h200-run1/sweeps.json.gz")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    let mut runs = 0;
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..36 {
        files.push((format!("m{i}.json"), mutate(&quick, &mut g)));
    }
    files.push(("m-archive.tar.gz".into(), tar_gz("runs/r.json", &mutate(&quick, &mut g))));
    // Bombs: 64 MiB of spaces after the document, under a 4 MiB limit.
    let mut bomb = quick.clone();
    bomb.extend(std::iter::repeat_n(b' ', 64 << 20));
    files.push(("bomb.json.gz".into(), gz(&bomb)));
    files.push(("bomb.tar.gz".into(), tar_gz("runs/bomb.json", &bomb)));
    for (name, bytes) in &files {
        std::fs::write(d.join(name), bytes).unwrap();
        for args in commands(name) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (code, err) = run(d, &args);
            if name.starts_with("bomb") && args[0] != "chipmap" {
                assert_eq!(code, 5, "{args:?}: {err}");
            }
            runs += 1;
        }
        // baseline quarantine moves the file: on a copy.
        std::fs::write(d.join("q.json"), bytes).unwrap();
        run(d, &["baseline", "quarantine", "q.json"]);
    }
    // dissect --from on mutated sweeps and a bomb.
    for i in 0..4 {
        let f = d.join(format!("dissect{i}"));
        std::fs::create_dir_all(&f).unwrap();
        let bytes = if i == 3 { gz(&bomb) } else { mutate(&sweeps, &mut g) };
        std::fs::write(f.join("sweeps.json.gz"), bytes).unwrap();
        let (code, err) = run(d, &["dissect", "--from", f.to_str().unwrap()]);
        if i == 3 {
            assert_eq!(code, 5, "{err}");
        }
        runs += 1;
    }
    // A folder of everything above, with link loops and pipes inside.
    let all = d.join("all/node1");
    std::fs::create_dir_all(&all).unwrap();
    for (name, bytes) in files.iter().filter(|(n, _)| !n.starts_with("bomb")) {
        std::fs::write(all.join(name), bytes).unwrap();
    }
    std::os::unix::fs::symlink(d.join("all"), all.join("loop")).unwrap();
    let piped = ["p.json", "p.json.gz", "p.tar.gz"]
        .iter()
        .all(|n| Command::new("mkfifo").arg(all.join(n)).status().is_ok_and(|s| s.success()));
    for args in [
        vec!["history", "import", "--db", "all.db", "all"],
        vec!["fleet", "all", "--drain-commands"],
        vec!["calibrate", "all"],
    ] {
        run(d, &args);
        runs += 1;
    }
    if piped {
        for p in ["all/node1/p.json", "all/node1/p.json.gz", "all/node1/p.tar.gz"] {
            for args in commands(p) {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let (code, err) = run(d, &args);
                assert_eq!(code, 5, "{args:?}: {err}");
                runs += 1;
            }
        }
    }
    println!("{runs} runs in {:.1} s", started.elapsed().as_secs_f64());
}
