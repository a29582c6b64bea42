//! Servers nobody here wrote, under the interposer, each loaded by clients
//! on loopback: memcached (worker threads that hand connections over
//! through mutex-guarded queues), Redis (I/O threads, which Redis parks
//! and releases on a mutex each, and background threads that wait on
//! condition variables for lazy frees), PostgreSQL with pgbench (whose
//! client threads start together at a pthread barrier), MariaDB with
//! transactions that wait for each other's row locks and mariadb-slap,
//! Apache's event MPM behind Varnish (whose requests for an object being
//! fetched wait for it on a condition variable), rsyslog (whose queues
//! hand messages to worker threads that wait on condition variables,
//! with timeouts after which idle workers exit), and nginx reading files
//! on its thread pools. Each must answer exactly what its clients'
//! operations imply, shut down cleanly, and write a `WAITWISE_PROFILE`
//! that parses and holds its threads' waits.
//!
//! The servers must be installed (`apt-get install -y memcached
//! redis-server postgresql mariadb-server mariadb-client apache2
//! varnish rsyslog nginx`), so these tests are ignored by `cargo test
//! --workspace` and run with `cargo test -p waitwise-preload --test
//! servers -- --ignored`; `.ci/run` installs the servers and runs them.
//! Every server is started by its test on a port or socket of its own and
//! killed if the test fails. Each wait is given a generous limit as a hang
//! detector, never as a performance bound.

mod common;

use common::{installed, preload_so, read_profile, run_ok_within, scratch_dir, total_waits};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server or client still going after this is reported as a hang.
const HANG_LIMIT: Duration = Duration::from_secs(120);

/// Client threads per server.
const CLIENTS: usize = 8;
/// Operations of each kind per client thread.
const OPS_PER_CLIENT: usize = 2_000;
/// The interposer's policies, each of which the web and log servers run
/// under.
const POLICIES: [&str; 4] = ["two-phase", "spin", "block", "randomized"];
/// pgbench's transactions per client.
const PGBENCH_TRANSACTIONS_PER_CLIENT: usize = 250;

/// A program from `PATH`, or a failure saying how to install it.
fn program(name: &str) -> PathBuf {
    installed(
        name,
        "memcached redis-server postgresql mariadb-server mariadb-client apache2 varnish rsyslog nginx",
    )
}

/// A scratch path of this test's own (named per process: test binaries
/// may run at once).
fn scratch_file(name: &str) -> PathBuf {
    scratch_dir().join(format!("servers-{}-{name}", std::process::id()))
}

/// A loopback port that was free a moment ago (the kernel's pick).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind a loopback port")
        .port()
}

/// A server process in its own process group, the whole group killed if
/// the test fails before the server is shut down (a server's worker
/// processes, Apache's or nginx's, would otherwise outlive the test).
struct Server {
    name: &'static str,
    child: Option<Child>,
}

impl Server {
    /// Starts `cmd` in a new process group (its output goes to a log
    /// file, shown on failure).
    fn start(name: &'static str, mut cmd: Command) -> Self {
        let log = std::fs::File::create(scratch_file(&format!("{name}.log"))).expect("server log");
        let child = cmd
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("server log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("start {name} ({cmd:?}): {e}"));
        Self {
            name,
            child: Some(child),
        }
    }

    /// The server's output so far.
    fn log(&self) -> String {
        std::fs::read_to_string(scratch_file(&format!("{}.log", self.name))).unwrap_or_default()
    }

    /// Connects to `port`, retrying while the server starts.
    fn connect(&mut self, port: u16) -> TcpStream {
        let start = Instant::now();
        loop {
            match TcpStream::connect(("127.0.0.1", port)) {
                Ok(stream) => {
                    stream
                        .set_read_timeout(Some(HANG_LIMIT))
                        .expect("read timeout");
                    return stream;
                }
                Err(e) => {
                    if let Some(status) = self
                        .child
                        .as_mut()
                        .and_then(|c| c.try_wait().ok().flatten())
                    {
                        panic!(
                            "{} exited ({status}) before accepting:\n{}",
                            self.name,
                            self.log()
                        );
                    }
                    assert!(
                        start.elapsed() < HANG_LIMIT,
                        "{} did not accept on port {port}: {e}\n{}",
                        self.name,
                        self.log()
                    );
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }

    /// Waits for the server to exit (after it was asked to) and returns
    /// its log.
    fn wait_for_exit(mut self) -> String {
        let mut child = self.child.take().expect("server running");
        let start = Instant::now();
        loop {
            if child.try_wait().expect("wait for the server").is_some() {
                return self.log();
            }
            if start.elapsed() > HANG_LIMIT {
                kill_group(&mut child);
                panic!("{} did not exit after shutdown:\n{}", self.name, self.log());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Server {
    /// Asks the server to stop with `SIGTERM`.
    fn terminate(&self) {
        self.signal(libc::SIGTERM);
    }

    /// Sends the server `signal`.
    fn signal(&self, signal: libc::c_int) {
        let pid = self.child.as_ref().expect("server running").id();
        let pid = libc::pid_t::try_from(pid).expect("a pid");
        // SAFETY: kill takes no pointers; `pid` is our child, not reaped.
        let rc = unsafe { libc::kill(pid, signal) };
        assert_eq!(rc, 0, "signal {}", self.name);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_group(&mut child);
            eprintln!("{} killed; its log:\n{}", self.name, self.log());
        }
    }
}

/// Kills `child`'s process group (the server and every process it
/// started) and reaps `child`.
fn kill_group(child: &mut Child) {
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill takes no pointers. `-pid` names the group that
        // `Server::start` made for this child; Linux does not hand the
        // number out again while a process of that group lives, even after
        // the child itself was reaped (`connect` may have).
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A line-oriented client of a text protocol (memcached's, Redis's
/// inline commands).
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    fn new(stream: TcpStream) -> Self {
        let writer = stream.try_clone().expect("clone the stream");
        Self {
            reader: BufReader::new(stream),
            writer,
        }
    }

    /// Sends `request` and reads one reply line (without its CRLF).
    fn ask(&mut self, request: &str) -> String {
        self.writer
            .write_all(request.as_bytes())
            .expect("send a request");
        self.line()
    }

    /// The next reply line (without its CRLF).
    fn line(&mut self) -> String {
        let mut line = String::new();
        let n = self.reader.read_line(&mut line).expect("read a reply");
        assert!(n > 0, "the server closed the connection");
        line.truncate(line.trim_end_matches(['\r', '\n']).len());
        line
    }
}

/// Runs `work(client index, client)` on one thread per connection, all at
/// once.
fn on_client_threads(connections: Vec<TcpStream>, work: impl Fn(usize, Client) + Sync) {
    std::thread::scope(|s| {
        for (c, stream) in connections.into_iter().enumerate() {
            let work = &work;
            s.spawn(move || work(c, Client::new(stream)));
        }
    });
}

/// Sends `request` (the server's own shutdown command) on `admin`, waits
/// for the server to exit, and checks that its `profile` recorded waits.
fn shut_down_with(server: Server, mut admin: Client, request: &str, profile: &Path) {
    admin
        .writer
        .write_all(request.as_bytes())
        .expect("send the shutdown request");
    let name = server.name;
    let log = server.wait_for_exit();
    let objects = read_profile(profile);
    assert!(
        total_waits(&objects) > 0,
        "{name}'s threads recorded no waits: {objects:?}\n{log}"
    );
    let _ = std::fs::remove_file(profile);
}

#[test]
#[ignore = "needs memcached: cargo test -p waitwise-preload --test servers -- --ignored"]
fn memcached_stores_counts_and_shuts_down() {
    let port = free_port();
    let profile = scratch_file("memcached.profile.json");
    let _ = std::fs::remove_file(&profile);
    let mut cmd = common::preloaded(program("memcached"));
    // Four worker threads; `-A` enables the `shutdown` command; `-u root`
    // is required when run as root and ignored otherwise.
    cmd.args(["-t", "4", "-A", "-u", "root", "-U", "0"])
        .args(["-l", "127.0.0.1", "-m", "64"])
        .arg("-p")
        .arg(port.to_string())
        .env("WAITWISE_PROFILE", &profile);
    let mut server = Server::start("memcached", cmd);
    let mut admin = Client::new(server.connect(port));
    assert_eq!(admin.ask("set counter 0 0 1\r\n0\r\n"), "STORED");
    let connections = (0..CLIENTS).map(|_| server.connect(port)).collect();
    on_client_threads(connections, |c, mut client| {
        for i in 0..OPS_PER_CLIENT {
            let value = format!("v{c}.{i}");
            let stored = client.ask(&format!("set k{c}.{i} 0 0 {}\r\n{value}\r\n", value.len()));
            assert_eq!(stored, "STORED");
            let count: u64 = client.ask("incr counter 1\r\n").parse().expect("a count");
            assert!(count >= 1);
        }
        for i in 0..OPS_PER_CLIENT {
            let value = format!("v{c}.{i}");
            assert_eq!(
                client.ask(&format!("get k{c}.{i}\r\n")),
                format!("VALUE k{c}.{i} 0 {}", value.len())
            );
            assert_eq!(client.line(), value);
            assert_eq!(client.line(), "END");
        }
    });
    let total = (CLIENTS * OPS_PER_CLIENT).to_string();
    assert_eq!(
        admin.ask("get counter\r\n"),
        format!("VALUE counter 0 {}", total.len())
    );
    assert_eq!(admin.line(), total);
    assert_eq!(admin.line(), "END");
    shut_down_with(server, admin, "shutdown\r\n", &profile);
}

#[test]
#[ignore = "needs redis-server: cargo test -p waitwise-preload --test servers -- --ignored"]
fn redis_with_io_threads_counts_lists_and_frees_lazily() {
    let port = free_port();
    let profile = scratch_file("redis.profile.json");
    let _ = std::fs::remove_file(&profile);
    let mut cmd = common::preloaded(program("redis-server"));
    cmd.args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .args(["--daemonize", "no", "--protected-mode", "no"])
        // Two I/O threads (the main thread and one more), reading too,
        // and deletes freed by a background thread.
        .args(["--io-threads", "2", "--io-threads-do-reads", "yes"])
        .args(["--lazyfree-lazy-user-del", "yes"])
        .arg("--port")
        .arg(port.to_string())
        .env("WAITWISE_PROFILE", &profile);
    let mut server = Server::start("redis-server", cmd);
    let mut admin = Client::new(server.connect(port));
    assert_eq!(admin.ask("PING\r\n"), "+PONG");
    let connections = (0..CLIENTS).map(|_| server.connect(port)).collect();
    on_client_threads(connections, |c, mut client| {
        for i in 0..OPS_PER_CLIENT {
            assert!(client.ask("INCR counter\r\n").starts_with(':'));
            assert_eq!(
                client.ask(&format!("RPUSH list{c} {i}\r\n")),
                format!(":{}", i + 1)
            );
        }
    });
    let total = (CLIENTS * OPS_PER_CLIENT).to_string();
    assert_eq!(admin.ask("GET counter\r\n"), format!("${}", total.len()));
    assert_eq!(admin.line(), total);
    for c in 0..CLIENTS {
        // Each list in the order its client pushed it.
        assert_eq!(
            admin.ask(&format!("LRANGE list{c} 0 -1\r\n")),
            format!("*{OPS_PER_CLIENT}")
        );
        for i in 0..OPS_PER_CLIENT {
            assert_eq!(admin.line(), format!("${}", i.to_string().len()));
            assert_eq!(admin.line(), i.to_string());
        }
        // A list this long is freed by the background thread.
        assert_eq!(admin.ask(&format!("DEL list{c}\r\n")), ":1");
    }
    assert_eq!(admin.ask("DBSIZE\r\n"), ":1");
    shut_down_with(server, admin, "SHUTDOWN NOSAVE\r\n", &profile);
}

/// PostgreSQL's programs: the server's (`initdb`, `postgres`,
/// `pg_isready`) from the newest `/usr/lib/postgresql/<version>/bin`
/// (Debian's layout), else from `PATH`, as are the clients'.
fn postgres_program(name: &str) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path().join("bin"))
                .collect()
        })
        .unwrap_or_default();
    dirs.sort_by_key(|d| {
        d.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
    });
    dirs.iter()
        .rev()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| program(name))
}

/// The user and group that run a server that refuses root: `user` (which
/// installing `package` creates) when this test runs as root, else this
/// process's own.
fn service_ids(user: &std::ffi::CStr, package: &str) -> (u32, u32) {
    // SAFETY: geteuid, getegid and getpwnam take no pointers but a
    // NUL-terminated name; getpwnam's result is read at once, before any
    // other call could overwrite its static buffer (tests of this binary
    // that run at once do not call it).
    unsafe {
        if libc::geteuid() != 0 {
            return (libc::geteuid(), libc::getegid());
        }
        let pw = libc::getpwnam(user.as_ptr());
        assert!(
            !pw.is_null(),
            "running as root, and there is no {user:?} user to run the server: \
             apt-get install -y {package} creates it"
        );
        ((*pw).pw_uid, (*pw).pw_gid)
    }
}

/// `program` run as `(uid, gid)` (see [`service_ids`]).
fn as_user(program: &Path, (uid, gid): (u32, u32)) -> Command {
    let mut cmd = common::native(program);
    cmd.uid(uid).gid(gid);
    cmd
}

/// A directory of the server's own that its user can reach (the build's
/// scratch directory may sit under one it cannot), holding a copy of the
/// interposer; returns it and the copy.
fn server_dir(name: &str, (uid, gid): (u32, u32)) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("waitwise-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the server's directory");
    std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).expect("chown the directory");
    let so = common::copy_interposer_to(&dir);
    (dir, so)
}

/// The profiles (`server-*.json`) the server's processes wrote in `dir`,
/// each parsed and checked; their objects.
fn server_profiles(dir: &Path) -> Vec<serde_json::Value> {
    profiles_named(dir, "server-")
}

/// The profiles whose names start with `prefix` in `dir`, each parsed and
/// checked; their objects.
fn profiles_named(dir: &Path, prefix: &str) -> Vec<serde_json::Value> {
    let profiles: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("list the server's directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .collect();
    assert!(
        !profiles.is_empty(),
        "the server's processes wrote no profile {prefix}*"
    );
    profiles.iter().flat_map(|p| read_profile(p)).collect()
}

#[test]
#[ignore = "needs postgresql: cargo test -p waitwise-preload --test servers -- --ignored"]
fn postgres_and_pgbench_keep_the_tpcb_balances() {
    let ids = service_ids(c"postgres", "postgresql");
    // The data, the socket, the profiles and the interposer's copy.
    let (dir, so) = server_dir("postgres", ids);
    let data = dir.join("data");
    let port = free_port().to_string();
    run_ok_within(
        as_user(&postgres_program("initdb"), ids)
            .arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", "postgres", "--no-sync"]),
        HANG_LIMIT,
    );
    // The server and every backend it forks run under the interposer,
    // each writing its own profile.
    let mut server_cmd = as_user(&postgres_program("postgres"), ids);
    server_cmd
        .arg("-D")
        .arg(&data)
        .arg("-k")
        .arg(&dir)
        .args(["-p", &port, "-c", "listen_addresses=", "-c", "fsync=off"])
        .env("LD_PRELOAD", &so)
        .env("WAITWISE_PROFILE", dir.join("server-%p.json"));
    let server = Server::start("postgres", server_cmd);
    let start = Instant::now();
    while !Command::new(postgres_program("pg_isready"))
        .arg("-h")
        .arg(&dir)
        .args(["-p", &port, "-q"])
        .status()
        .is_ok_and(|s| s.success())
    {
        assert!(
            start.elapsed() < HANG_LIMIT,
            "postgres did not start:\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let client = |name: &str| {
        let mut cmd = common::native(postgres_program(name));
        cmd.arg("-h")
            .arg(&dir)
            .args(["-p", &port, "-U", "postgres"]);
        cmd
    };
    run_ok_within(
        client("pgbench").args(["-i", "-q", "-s", "2", "postgres"]),
        HANG_LIMIT,
    );
    // pgbench itself under the interposer: 8 clients on 4 threads, which
    // start together at a pthread barrier.
    let pgbench_profile = dir.join("pgbench.json");
    let transactions = CLIENTS * PGBENCH_TRANSACTIONS_PER_CLIENT;
    let mut bench = client("pgbench");
    bench
        .env("LD_PRELOAD", &so)
        .env("WAITWISE_PROFILE", &pgbench_profile)
        .args(["-n", "-c", &CLIENTS.to_string(), "-j", "4", "-t"])
        .arg(PGBENCH_TRANSACTIONS_PER_CLIENT.to_string())
        .arg("postgres");
    let out = String::from_utf8_lossy(&run_ok_within(&mut bench, HANG_LIMIT).stdout).into_owned();
    assert!(
        out.contains(&format!(
            "number of transactions actually processed: {transactions}/{transactions}"
        )),
        "{out}"
    );
    assert!(out.contains("number of failed transactions: 0 "), "{out}");
    let barrier_waits = total_waits(
        read_profile(&pgbench_profile)
            .iter()
            .filter(|o| o["kind"] == "barrier"),
    );
    assert!(barrier_waits > 0, "pgbench's threads met at no barrier");
    // TPC-B's invariants: every transaction moved one delta into an
    // account, a teller and a branch, and logged it once.
    let mut check = client("psql");
    check.args(["-At", "-d", "postgres", "-c"]).arg(
        "SELECT (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT sum(delta) FROM pgbench_history), \
                (SELECT sum(tbalance) FROM pgbench_tellers) = (SELECT sum(delta) FROM pgbench_history), \
                (SELECT sum(bbalance) FROM pgbench_branches) = (SELECT sum(delta) FROM pgbench_history), \
                (SELECT count(*) FROM pgbench_history)",
    );
    let answer =
        String::from_utf8_lossy(&run_ok_within(&mut check, HANG_LIMIT).stdout).into_owned();
    assert_eq!(answer.trim(), format!("t|t|t|{transactions}"));
    // A fast shutdown (SIGINT), which every backend must survive to exit.
    let pid = server.child.as_ref().expect("server running").id();
    // SAFETY: kill takes no pointers; the pid is our own child's, not yet
    // reaped.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) }, 0);
    let log = server.wait_for_exit();
    for bad in ["PANIC", "TRAP", "terminated by signal", "was terminated"] {
        assert!(!log.contains(bad), "the server's log says {bad}:\n{log}");
    }
    assert!(log.contains("database system is shut down"), "{log}");
    server_profiles(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs mariadb-server: cargo test -p waitwise-preload --test servers -- --ignored"]
fn mariadb_keeps_counts_under_contended_row_locks() {
    // MariaDB's connection threads and InnoDB's background threads wait on
    // pthread mutexes and condition variables (a transaction waiting for a
    // row lock waits on one with a timeout); mariadb-slap's client threads
    // start together on a mutex and condition variable.
    let ids = service_ids(c"mysql", "mariadb-server");
    let (dir, so) = server_dir("mariadb", ids);
    let data = dir.join("data");
    let socket = dir.join("sock");
    run_ok_within(
        as_user(&program("mariadb-install-db"), ids)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"]),
        HANG_LIMIT,
    );
    let mut server_cmd = as_user(&program("mariadbd"), ids);
    server_cmd
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--socket={}", socket.display()))
        .args(["--skip-networking", "--innodb-buffer-pool-size=64M"])
        .env("LD_PRELOAD", &so)
        .env("WAITWISE_PROFILE", dir.join("server-%p.json"));
    let mut server = Server::start("mariadbd", server_cmd);
    // A client of the server's socket, as root.
    let client = |name: &str| {
        let mut cmd = common::native(program(name));
        cmd.arg(format!("--socket={}", socket.display()))
            .arg("--user=root");
        cmd
    };
    let start = Instant::now();
    while !client("mariadb-admin")
        .args(["--silent", "ping"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        if let Some(status) = server
            .child
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten())
        {
            panic!(
                "mariadbd exited ({status}) before answering:\n{}",
                server.log()
            );
        }
        assert!(
            start.elapsed() < HANG_LIMIT,
            "mariadbd did not start:\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let sql = |statements: &str| -> String {
        let mut cmd = client("mariadb");
        cmd.args(["--batch", "--skip-column-names", "-e", statements]);
        String::from_utf8_lossy(&run_ok_within(&mut cmd, HANG_LIMIT).stdout).into_owned()
    };
    sql("CREATE DATABASE t; \
         CREATE TABLE t.counter (id INT PRIMARY KEY, n BIGINT) ENGINE=InnoDB; \
         INSERT INTO t.counter VALUES (1, 0); \
         CREATE TABLE t.log (id INT AUTO_INCREMENT PRIMARY KEY, client INT, k INT) ENGINE=InnoDB;");
    // Every client's transactions update the one counter row (so each
    // waits for the others' row locks) and log a row of their own.
    let transactions = OPS_PER_CLIENT / 10;
    std::thread::scope(|s| {
        for c in 0..CLIENTS {
            let sql = &sql;
            s.spawn(move || {
                let script: String = (1..=transactions)
                    .map(|k| {
                        format!(
                            "START TRANSACTION; UPDATE t.counter SET n = n + 1 WHERE id = 1; \
                             INSERT INTO t.log (client, k) VALUES ({c}, {k}); COMMIT;"
                        )
                    })
                    .collect();
                sql(&script);
            });
        }
    });
    let per_client = (transactions * (transactions + 1) / 2) as u64;
    assert_eq!(
        sql("SELECT n FROM t.counter; SELECT COUNT(*), SUM(k), COUNT(DISTINCT client) FROM t.log;"),
        format!(
            "{}\n{}\t{}\t{CLIENTS}\n",
            CLIENTS * transactions,
            CLIENTS * transactions,
            CLIENTS as u64 * per_client
        )
    );
    // mariadb-slap under the interposer too: 8 client threads, mixed
    // reads and writes of a generated table.
    let mut slap = client("mariadb-slap");
    slap.env("LD_PRELOAD", preload_so())
        .env("WAITWISE_PROFILE", dir.join("slap.json"))
        .arg(format!("--concurrency={CLIENTS}"))
        .args([
            "--iterations=2",
            "--number-of-queries=2000",
            "--auto-generate-sql",
            "--auto-generate-sql-load-type=mixed",
            "--auto-generate-sql-add-autoincrement",
        ]);
    let out = String::from_utf8_lossy(&run_ok_within(&mut slap, HANG_LIMIT).stdout).into_owned();
    assert!(
        out.contains(&format!("Number of clients running queries: {CLIENTS}")),
        "{out}"
    );
    assert!(
        total_waits(&read_profile(&dir.join("slap.json"))) > 0,
        "mariadb-slap's threads recorded no waits"
    );
    run_ok_within(client("mariadb-admin").arg("shutdown"), HANG_LIMIT);
    let log = server.wait_for_exit();
    assert!(log.contains("Shutdown complete"), "{log}");
    for bad in ["[ERROR]", "got signal", "Assertion"] {
        assert!(!log.contains(bad), "the server's log says {bad}:\n{log}");
    }
    let objects = server_profiles(&dir);
    assert!(
        total_waits(objects.iter().filter(|o| o["kind"] == "cond")) > 0,
        "mariadbd recorded no condition-variable waits: {objects:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The body of `/f{i}` that the web server serves: 100 B to 200 KB, each
/// byte a function of the file and its offset.
fn web_file(i: usize) -> Vec<u8> {
    let len = [100, 3_000, 40_000, 200_000][i % 4];
    (0..len).map(|j| ((i * 31 + j * 7) % 251) as u8).collect()
}

/// Files the web server serves.
const WEB_FILES: usize = 64;

/// Fails unless `objects` (a server's profiles) hold waits of every one
/// of `kinds`; `who` names the server in the message.
fn assert_waited(objects: &[serde_json::Value], kinds: &[&str], who: &str) {
    for kind in kinds {
        assert!(
            total_waits(objects.iter().filter(|o| o["kind"] == *kind)) > 0,
            "{who} recorded no {kind} waits: {objects:?}"
        );
    }
}

/// Opens `dir` to every user (servers' workers that run as users of
/// their own write their profiles there).
fn open_to_all(dir: &Path) {
    std::fs::set_permissions(
        dir,
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o777),
    )
    .expect("open the directory to the servers' users");
}

/// Writes the [`web_file`]s into `dir/htdocs`; returns that directory.
fn web_root(dir: &Path) -> PathBuf {
    let docs = dir.join("htdocs");
    std::fs::create_dir(&docs).expect("create the document root");
    for i in 0..WEB_FILES {
        std::fs::write(docs.join(format!("f{i}")), web_file(i)).expect("write a file");
    }
    docs
}

/// An HTTP/1.1 client on one keep-alive connection at a time: a server
/// may close one between requests (Apache after 100 requests, for
/// instance), and the client then opens another.
struct HttpClient {
    port: u16,
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl HttpClient {
    /// A client of `port`, on `stream`, a connection to it.
    fn new(port: u16, stream: TcpStream) -> Self {
        let writer = stream.try_clone().expect("clone the stream");
        Self {
            port,
            reader: BufReader::new(stream),
            writer,
        }
    }

    /// `GET path`: the response's headers (lower-cased names) and body.
    /// The response must be `200` with a `Content-Length`.
    fn get(&mut self, path: &str) -> (Vec<(String, String)>, Vec<u8>) {
        use std::io::Read;
        let mut line = String::new();
        for fresh in [false, true] {
            if fresh {
                let stream = TcpStream::connect(("127.0.0.1", self.port)).expect("reconnect");
                stream
                    .set_read_timeout(Some(HANG_LIMIT))
                    .expect("read timeout");
                *self = Self::new(self.port, stream);
            }
            // One write (a request in pieces would wait for the server's
            // delayed acknowledgement). A write to a connection the server
            // closed may fail or not.
            let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
            let sent = self.writer.write_all(request.as_bytes());
            line.clear();
            if sent.is_ok() && self.reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                break;
            }
            assert!(!fresh, "GET {path}: a new connection was closed at once");
        }
        assert!(line.starts_with("HTTP/1.1 200 "), "GET {path}: {line:?}");
        let mut headers = Vec::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).expect("a header");
            let header = line.trim_end_matches(['\r', '\n']);
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').expect("name: value");
            headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
        }
        let len: usize = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .unwrap_or_else(|| panic!("GET {path}: no Content-Length in {headers:?}"))
            .1
            .parse()
            .expect("a length");
        let mut body = vec![0; len];
        self.reader.read_exact(&mut body).expect("the body");
        (headers, body)
    }
}

/// The directory of Apache's modules (Debian's, or Fedora's layout).
fn apache_modules() -> PathBuf {
    ["/usr/lib/apache2/modules", "/usr/lib64/httpd/modules"]
        .iter()
        .map(PathBuf::from)
        .find(|d| d.join("mod_mpm_event.so").is_file())
        .expect("Apache's modules (apt-get install -y apache2)")
}

#[test]
#[ignore = "needs apache2 and varnish: cargo test -p waitwise-preload --test servers -- --ignored"]
fn apache_behind_varnish_serves_every_byte_under_every_policy() {
    // Apache's event MPM: two child processes of 8 worker threads, which
    // its listener hands connections to through a queue guarded by a
    // mutex and condition variable. Varnish in front: its worker pools
    // wait on condition variables for work, and requests for an object
    // that another request is fetching wait on its waiting list; its
    // manager and cache processes run as users of their own.
    for policy in POLICIES {
        apache_behind_varnish(policy);
    }
}

/// Apache and Varnish under the interposer's `policy`, loaded by clients
/// of each (see the test above).
fn apache_behind_varnish(policy: &str) {
    let apache = program("apache2");
    let varnishd = program("varnishd");
    let (dir, so) = server_dir("apache-varnish", service_ids(c"nobody", "apache2"));
    // Apache's workers write as `nobody`, Varnish's processes as `varnish`
    // and `vcache`.
    open_to_all(&dir);
    let docs = web_root(&dir);
    let (web_port, cache_port) = (free_port(), free_port());
    let conf = dir.join("httpd.conf");
    std::fs::write(
        &conf,
        format!(
            "ServerRoot {dir}\nServerName localhost\nListen 127.0.0.1:{web_port}\n\
             LoadModule mpm_event_module {modules}/mod_mpm_event.so\n\
             LoadModule authz_core_module {modules}/mod_authz_core.so\n\
             PidFile {dir}/httpd.pid\nErrorLog {dir}/error.log\n\
             LogFormat \"%r %>s %b\" short\nCustomLog {dir}/access.log short\n\
             DocumentRoot {docs}\n<Directory {docs}>\nRequire all granted\n</Directory>\n\
             User nobody\nGroup {group}\n\
             StartServers 2\nServerLimit 2\nThreadsPerChild 8\nMaxRequestWorkers 16\n\
             MinSpareThreads 4\nMaxSpareThreads 16\nEnableSendfile Off\n",
            dir = dir.display(),
            docs = docs.display(),
            modules = apache_modules().display(),
            // Debian's name for nobody's group, else Fedora's.
            group = if Path::new("/etc/debian_version").exists() {
                "nogroup"
            } else {
                "nobody"
            },
        ),
    )
    .expect("write Apache's configuration");
    let mut web_cmd = common::native(&apache);
    web_cmd
        .arg("-f")
        .arg(&conf)
        .arg("-DFOREGROUND")
        .env("LD_PRELOAD", &so)
        .env("WAITWISE_POLICY", policy)
        .env("WAITWISE_PROFILE", dir.join("apache-%p.json"));
    let mut web = Server::start("apache2", web_cmd);
    let mut cache_cmd = common::native(&varnishd);
    cache_cmd
        .arg("-F")
        .args(["-a", &format!("127.0.0.1:{cache_port}")])
        .args(["-b", &format!("127.0.0.1:{web_port}")])
        .arg("-n")
        .arg(dir.join("varnish"))
        .args(["-s", "malloc,64m", "-t", "3600"])
        .args(["-p", "thread_pools=2", "-p", "thread_pool_min=8"])
        .env("LD_PRELOAD", &so)
        .env("WAITWISE_POLICY", policy)
        .env("WAITWISE_PROFILE", dir.join("varnish-%p.json"));
    let mut cache = Server::start("varnishd", cache_cmd);
    let direct: Vec<_> = (0..CLIENTS).map(|_| web.connect(web_port)).collect();
    let cached: Vec<_> = (0..CLIENTS).map(|_| cache.connect(cache_port)).collect();
    let files: Vec<Vec<u8>> = (0..WEB_FILES).map(web_file).collect();
    let direct_requests = OPS_PER_CLIENT;
    // Varnish's misses, each one fetch from Apache.
    let misses = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for (c, stream) in direct.into_iter().enumerate() {
            let files = &files;
            s.spawn(move || {
                let mut client = HttpClient::new(web_port, stream);
                for k in 0..direct_requests {
                    let i = (k * 5 + c) % WEB_FILES;
                    let (_, body) = client.get(&format!("/f{i}"));
                    assert!(body == files[i], "{policy}: Apache's /f{i} differs");
                }
            });
        }
        for (c, stream) in cached.into_iter().enumerate() {
            let (files, misses) = (&files, &misses);
            s.spawn(move || {
                let mut client = HttpClient::new(cache_port, stream);
                for k in 0..OPS_PER_CLIENT {
                    // Every client starts on the same files, so that the
                    // first requests for each wait for one fetch.
                    let i = (k * 7 + c / 2) % WEB_FILES;
                    let (headers, body) = client.get(&format!("/f{i}"));
                    assert!(body == files[i], "{policy}: Varnish's /f{i} differs");
                    let xids = headers
                        .iter()
                        .find(|(n, _)| n == "x-varnish")
                        .map(|(_, v)| v.split_whitespace().count());
                    match xids {
                        Some(1) => {
                            misses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        Some(2) => {}
                        _ => panic!("no X-Varnish hit or miss in {headers:?}"),
                    }
                }
            });
        }
    });
    let misses = misses.into_inner();
    assert!(
        (WEB_FILES..CLIENTS * OPS_PER_CLIENT / 2).contains(&misses),
        "{policy}: {misses} of {} Varnish requests missed its cache",
        CLIENTS * OPS_PER_CLIENT
    );
    cache.terminate();
    let cache_log = cache.wait_for_exit();
    web.terminate();
    let web_log = web.wait_for_exit();
    // Apache logged every request it answered: the clients' own and
    // Varnish's fetches, one per miss.
    let access = std::fs::read_to_string(dir.join("access.log")).expect("Apache's access log");
    assert_eq!(
        access.lines().count(),
        CLIENTS * direct_requests + misses,
        "{policy}: {web_log}"
    );
    assert!(
        access
            .lines()
            .all(|l| l.starts_with("GET /f") && l.contains(" 200 ")),
        "{access}"
    );
    let error_log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
    for bad in ["[core:error]", "exit signal", "AH00052"] {
        assert!(
            !error_log.contains(bad),
            "Apache's log says {bad}:\n{error_log}"
        );
    }
    assert!(
        cache_log.contains("manager dies") && !cache_log.contains("Panic"),
        "{cache_log}"
    );
    let apache = format!("{policy}: Apache");
    assert_waited(&profiles_named(&dir, "apache-"), &["cond"], &apache);
    let varnish = format!("{policy}: Varnish");
    assert_waited(
        &profiles_named(&dir, "varnish-"),
        &["mutex", "cond"],
        &varnish,
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs rsyslog: cargo test -p waitwise-preload --test servers -- --ignored"]
fn rsyslog_writes_every_message_through_its_queues_under_every_policy() {
    // rsyslog's TCP input thread hands messages to the main queue, whose
    // worker threads hand them to the file action's own queue and its
    // workers: each queue a mutex and condition variables. Idle workers
    // wait with a 20 ms timeout, then exit, and the queue starts them
    // again: the clients send in bursts 50 ms apart, so they do.
    for policy in POLICIES {
        rsyslog_under(policy);
    }
}

/// rsyslog under the interposer's `policy` (see the test above).
fn rsyslog_under(policy: &str) {
    const BURSTS: usize = 10;
    let per_burst = OPS_PER_CLIENT / 4;
    let dir = std::env::temp_dir().join(format!("waitwise-rsyslog-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("work")).expect("create rsyslog's directory");
    let out = dir.join("out.log");
    let port = free_port();
    let conf = dir.join("rsyslog.conf");
    let queue = "queue.type=\"LinkedList\" queue.size=\"400000\" \
                 queue.dequeueBatchSize=\"16\" queue.timeoutWorkerThreadShutdown=\"20\"";
    std::fs::write(
        &conf,
        format!(
            "global(workDirectory=\"{work}\")\n\
             module(load=\"imtcp\" MaxSessions=\"100\")\n\
             input(type=\"imtcp\" port=\"{port}\" address=\"127.0.0.1\")\n\
             template(name=\"raw\" type=\"string\" string=\"%msg:2:$%\\n\")\n\
             main_queue({queue} queue.workerThreads=\"4\" \
             queue.workerThreadMinimumMessages=\"100\")\n\
             action(type=\"omfile\" file=\"{out}\" template=\"raw\" {queue} \
             queue.workerThreads=\"2\")\n",
            work = dir.join("work").display(),
            out = out.display(),
        ),
    )
    .expect("write rsyslog's configuration");
    let mut cmd = common::native(program("rsyslogd"));
    cmd.arg("-n")
        .arg("-f")
        .arg(&conf)
        .arg("-i")
        .arg(dir.join("pid"))
        .env("LD_PRELOAD", preload_so())
        .env("WAITWISE_POLICY", policy)
        .env("WAITWISE_PROFILE", dir.join("rsyslog-%p.json"));
    let mut server = Server::start("rsyslogd", cmd);
    let connections: Vec<_> = (0..CLIENTS).map(|_| server.connect(port)).collect();
    std::thread::scope(|s| {
        for (c, mut stream) in connections.into_iter().enumerate() {
            s.spawn(move || {
                for burst in 0..BURSTS {
                    let lines: String = (0..per_burst)
                        .map(|k| {
                            let i = burst * per_burst + k;
                            format!("<13>Nov 28 12:00:00 host tag: m-{c}-{i}\n")
                        })
                        .collect();
                    stream.write_all(lines.as_bytes()).expect("send a burst");
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
        }
    });
    let total = CLIENTS * BURSTS * per_burst;
    let start = Instant::now();
    let written = || {
        std::fs::read_to_string(&out)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    while written() < total {
        assert!(
            start.elapsed() < HANG_LIMIT,
            "{policy}: rsyslog wrote {} of {total} messages:\n{}",
            written(),
            server.log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    server.terminate();
    let log = server.wait_for_exit();
    let text = std::fs::read_to_string(&out).expect("rsyslog's output");
    let mut got: Vec<&str> = text.lines().collect();
    got.sort_unstable();
    let mut expected: Vec<String> = (0..CLIENTS)
        .flat_map(|c| (0..BURSTS * per_burst).map(move |i| format!("m-{c}-{i}")))
        .collect();
    expected.sort_unstable();
    assert!(
        got == expected,
        "{policy}: rsyslog's output is not every message once ({} lines)\n{log}",
        got.len()
    );
    let rsyslog = format!("{policy}: rsyslog");
    assert_waited(
        &profiles_named(&dir, "rsyslog-"),
        &["mutex", "cond"],
        &rsyslog,
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs nginx: cargo test -p waitwise-preload --test servers -- --ignored"]
fn nginx_reads_on_its_thread_pool_and_serves_every_byte_under_every_policy() {
    // nginx's `aio threads`: each worker process hands every file read to
    // a pool of 4 threads through a task queue (a mutex and a condition
    // variable) and is told of its completion through an eventfd.
    for policy in POLICIES {
        nginx_under(policy);
    }
}

/// nginx under the interposer's `policy` (see the test above).
fn nginx_under(policy: &str) {
    let (dir, so) = server_dir("nginx", service_ids(c"nobody", "nginx"));
    // The worker processes run as `nobody` (when started as root), and
    // write their profiles here.
    open_to_all(&dir);
    let docs = web_root(&dir);
    let port = free_port();
    let conf = dir.join("nginx.conf");
    std::fs::write(
        &conf,
        format!(
            "daemon off;\nmaster_process on;\nworker_processes 2;\n\
             pid {dir}/nginx.pid;\nerror_log {dir}/error.log notice;\n\
             thread_pool io threads=4 max_queue=65536;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n access_log {dir}/access.log;\n\
             client_body_temp_path {dir}/body; proxy_temp_path {dir}/proxy;\n\
             fastcgi_temp_path {dir}/fastcgi; uwsgi_temp_path {dir}/uwsgi;\n\
             scgi_temp_path {dir}/scgi;\n\
             server {{\n listen 127.0.0.1:{port};\n root {docs};\n\
             aio threads=io;\n sendfile off;\n output_buffers 2 64k;\n }}\n}}\n",
            dir = dir.display(),
            docs = docs.display(),
        ),
    )
    .expect("write nginx's configuration");
    let mut cmd = common::native(program("nginx"));
    cmd.arg("-p")
        .arg(&dir)
        .arg("-e")
        .arg(dir.join("error.log"))
        .arg("-c")
        .arg(&conf)
        .env("LD_PRELOAD", &so)
        .env("WAITWISE_POLICY", policy)
        .env("WAITWISE_PROFILE", dir.join("nginx-%p.json"));
    let mut server = Server::start("nginx", cmd);
    let connections: Vec<_> = (0..CLIENTS).map(|_| server.connect(port)).collect();
    let files: Vec<Vec<u8>> = (0..WEB_FILES).map(web_file).collect();
    std::thread::scope(|s| {
        for (c, stream) in connections.into_iter().enumerate() {
            let files = &files;
            s.spawn(move || {
                let mut client = HttpClient::new(port, stream);
                for k in 0..OPS_PER_CLIENT {
                    let i = (k * 3 + c) % WEB_FILES;
                    let (_, body) = client.get(&format!("/f{i}"));
                    assert!(body == files[i], "{policy}: nginx's /f{i} differs");
                }
            });
        }
    });
    // SIGQUIT: a graceful shutdown, the workers finishing their requests.
    server.signal(libc::SIGQUIT);
    let log = server.wait_for_exit();
    let error_log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
    for bad in ["[alert]", "[emerg]", "[crit]", "exited on signal"] {
        assert!(
            !error_log.contains(bad),
            "{policy}: nginx's log says {bad}:\n{error_log}\n{log}"
        );
    }
    let access = std::fs::read_to_string(dir.join("access.log")).expect("nginx's access log");
    assert_eq!(
        access.lines().filter(|l| l.contains("\" 200 ")).count(),
        CLIENTS * OPS_PER_CLIENT,
        "{policy}: nginx's access log"
    );
    let nginx = format!("{policy}: nginx");
    assert_waited(&profiles_named(&dir, "nginx-"), &["cond"], &nginx);
    let _ = std::fs::remove_dir_all(&dir);
}
