use std::sync::Arc;

use charly_cli::project::PackageSection;

use crate::util::Fixture;

const THREADS: usize = 16;

#[test]
fn parallel_sets_of_one_file_all_land() {
    let f = Arc::new(Fixture::sample());
    let handles: Vec<_> = (0..THREADS)
        .map(|i| {
            let f = Arc::clone(&f);
            std::thread::spawn(move || {
                f.project.set(&format!("project.defaults.key{i}"), &i.to_string()).unwrap();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let text = f.read("charly.yml");
    for i in 0..THREADS {
        assert!(text.contains(&format!("key{i}: {i}")), "key{i} lost:\n{text}");
    }
}

#[test]
fn parallel_package_adds_all_land() {
    let f = Arc::new(Fixture::sample());
    let handles: Vec<_> = (0..THREADS)
        .map(|i| {
            let f = Arc::clone(&f);
            std::thread::spawn(move || {
                let section = PackageSection::ALL[i % 4];
                f.project.add_packages("hello-svc", section, &[format!("pkg{i}")]).unwrap();
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let value = serde_json::to_value(f.project.inspect("hello").unwrap()).unwrap();
    let packages = &value["candies"][0]["packages"];
    for i in 0..THREADS {
        let section = PackageSection::ALL[i % 4].name();
        let list = packages[section].as_array().unwrap();
        assert!(list.contains(&format!("pkg{i}").into()), "pkg{i} missing from {section}: {packages}");
    }
}

/// Another process holding the project directory's `flock` (as a second charly process does while it
/// edits a file there) makes an edit wait until it lets go.
#[cfg(unix)]
#[test]
fn an_edit_waits_for_another_process_holding_the_lock() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let f = Fixture::sample();
    let mut holder = Command::new("flock")
        .arg(f.root())
        .args(["sh", "-c", "echo locked; sleep 1"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("flock (util-linux) runs");
    let mut line = String::new();
    BufReader::new(holder.stdout.take().unwrap()).read_line(&mut line).unwrap();
    assert_eq!(line, "locked\n");
    let start = Instant::now();
    f.project.set("project.defaults.tag", "v2").unwrap();
    let waited = start.elapsed();
    holder.wait().unwrap();
    assert!(waited >= Duration::from_millis(500), "the edit did not wait for the lock: {waited:?}");
    assert!(f.read("charly.yml").contains("tag: v2"));
}

/// Two writes at once that would each be fine alone cannot complete a git directory between
/// them (trial 31, MED-1): of `d/objects/x` and `d/refs/y` beside a `HEAD`, or of `d/HEAD` and
/// `d/refs/y` beside `objects/`, at least one is refused and takes back what it made. Many
/// rounds, each two threads released together.
#[test]
fn parallel_writes_do_not_complete_a_git_directory() {
    let f = Arc::new(Fixture::sample());
    for round in 0..200 {
        let d = format!("race{round}");
        let (a, b) = match round % 2 {
            0 => {
                f.project
                    .write(std::path::Path::new(&format!("{d}/HEAD")), "ref: refs/heads/main\n")
                    .unwrap();
                (format!("{d}/objects/x"), format!("{d}/refs/y"))
            }
            _ => {
                f.project.write(std::path::Path::new(&format!("{d}/objects/x")), "").unwrap();
                (format!("{d}/HEAD"), format!("{d}/refs/y"))
            }
        };
        let barrier = Arc::new(std::sync::Barrier::new(2));
        let handles: Vec<_> = [a, b]
            .into_iter()
            .map(|path| {
                let (f, barrier) = (Arc::clone(&f), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    f.project.write(std::path::Path::new(&path), "ref: refs/heads/main\n").is_ok()
                })
            })
            .collect();
        let written: Vec<bool> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let dir = f.path(&d);
        let git = dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir();
        assert!(!git, "round {round}: {d} became a git directory (writes: {written:?})");
    }
}
