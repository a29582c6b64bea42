(* OCaml's systhreads under the interposer: the runtime's master lock,
   which every OCaml thread holds to run and hands on at each tick and
   blocking section, Mutex, Condition, Thread.join and the Event module's
   channels are pthread mutexes and condition variables inside the
   runtime (st_posix.h). Checks its own results; prints "done" last. *)

let check ok what =
  if not ok then begin
    Printf.printf "FAILED: %s\n%!" what;
    exit 1
  end

(* 4 threads adding to one counter under a Mutex, yielding the master
   lock now and then inside the critical section. *)
let () =
  let m = Mutex.create () in
  let counter = ref 0 in
  let add () =
    for i = 1 to 20_000 do
      Mutex.lock m;
      let v = !counter in
      if i mod 97 = 0 then Thread.yield ();
      counter := v + 1;
      Mutex.unlock m
    done
  in
  List.iter Thread.join (List.init 4 (fun _ -> Thread.create add ()));
  check (!counter = 80_000) (Printf.sprintf "counter %d, expected 80000" !counter)

(* A bounded buffer of 4 slots from 3 producers to 3 consumers. *)
let () =
  let m = Mutex.create () in
  let not_full = Condition.create () and not_empty = Condition.create () in
  let buf = Queue.create () in
  let per_producer = 10_000 in
  let producer p () =
    for i = 1 to per_producer do
      Mutex.lock m;
      while Queue.length buf >= 4 do Condition.wait not_full m done;
      Queue.push ((p * 1_000_000) + i) buf;
      Condition.signal not_empty;
      Mutex.unlock m
    done
  in
  let sums = Array.make 3 0 in
  let consumer c () =
    let rec loop () =
      Mutex.lock m;
      while Queue.is_empty buf do Condition.wait not_empty m done;
      let x = Queue.pop buf in
      Condition.signal not_full;
      Mutex.unlock m;
      if x >= 0 then begin
        sums.(c) <- sums.(c) + x;
        loop ()
      end
    in
    loop ()
  in
  let producers = List.init 3 (fun p -> Thread.create (producer p) ()) in
  let consumers = List.init 3 (fun c -> Thread.create (consumer c) ()) in
  List.iter Thread.join producers;
  Mutex.lock m;
  Mutex.unlock m;
  (* One end mark per consumer, through the same bounded buffer. *)
  for _ = 1 to 3 do
    Mutex.lock m;
    while Queue.length buf >= 4 do Condition.wait not_full m done;
    Queue.push (-1) buf;
    Condition.signal not_empty;
    Mutex.unlock m
  done;
  List.iter Thread.join consumers;
  let want = ref 0 in
  for p = 0 to 2 do
    want := !want + (p * 1_000_000 * per_producer) + (per_producer * (per_producer + 1) / 2)
  done;
  let got = Array.fold_left ( + ) 0 sums in
  check (got = !want) (Printf.sprintf "buffer sum %d, expected %d" got !want)

(* 4 threads taking turns in order through one Condition. *)
let () =
  let m = Mutex.create () and changed = Condition.create () in
  let turn = ref 0 and order = ref [] in
  let taker me () =
    for _ = 1 to 500 do
      Mutex.lock m;
      while !turn mod 4 <> me do Condition.wait changed m done;
      order := me :: !order;
      incr turn;
      Condition.broadcast changed;
      Mutex.unlock m
    done
  in
  List.iter Thread.join (List.init 4 (fun me -> Thread.create (taker me) ()));
  let order = List.rev !order in
  check (List.length order = 2000) "turns: not 2000 turns";
  List.iteri (fun i me -> check (me = i mod 4) (Printf.sprintf "turn %d went to %d" i me)) order

(* A pipeline of Event channels: 5000 numbers through 2 stages, with a
   choice between two channels at the end. *)
let () =
  let first = Event.new_channel () and second = Event.new_channel () in
  let odd = Event.new_channel () and even = Event.new_channel () in
  let n = 5_000 in
  let source =
    Thread.create (fun () -> for i = 1 to n do Event.sync (Event.send first i) done) ()
  in
  let double =
    Thread.create
      (fun () ->
        for _ = 1 to n do
          let x = Event.sync (Event.receive first) in
          Event.sync (Event.send second (2 * x))
        done)
      ()
  in
  let split =
    Thread.create
      (fun () ->
        for _ = 1 to n do
          let x = Event.sync (Event.receive second) in
          Event.sync (Event.send (if x mod 4 = 0 then even else odd) x)
        done)
      ()
  in
  let sum = ref 0 in
  for _ = 1 to n do
    sum := !sum + Event.sync (Event.choose [ Event.receive odd; Event.receive even ])
  done;
  List.iter Thread.join [ source; double; split ];
  check (!sum = n * (n + 1)) (Printf.sprintf "pipeline sum %d, expected %d" !sum (n * (n + 1)))

(* CPU-bound threads that allocate share the master lock through its
   ticks; each must finish with its own answer. *)
let () =
  let results = Array.make 4 0 in
  let work k () =
    let l = ref [] in
    for i = 1 to 300_000 do
      l := (i * k) :: !l;
      if List.length !l > 100 then l := []
    done;
    results.(k) <- List.fold_left ( + ) 0 (List.init 1000 (fun i -> i * k))
  in
  List.iter Thread.join (List.init 4 (fun k -> Thread.create (work k) ()));
  Array.iteri
    (fun k r -> check (r = k * 499_500) (Printf.sprintf "worker %d got %d" k r))
    results

(* Thread.delay and a blocking read release the master lock: a thread
   sleeping or reading a silent pipe must not stop the others, and the
   delay must not end early. *)
let () =
  let r, w = Unix.pipe () in
  let reader =
    Thread.create
      (fun () ->
        let b = Bytes.create 1 in
        let got = Unix.read r b 0 1 in
        check (got = 1 && Bytes.get b 0 = 'x') "pipe read")
      ()
  in
  let t0 = Unix.gettimeofday () in
  Thread.delay 0.05;
  let slept = Unix.gettimeofday () -. t0 in
  check (slept >= 0.049) (Printf.sprintf "Thread.delay 0.05 returned after %.4f s" slept);
  ignore (Unix.write_substring w "x" 0 1);
  Thread.join reader;
  Unix.close r;
  Unix.close w

let () = print_string "done\n"
