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
