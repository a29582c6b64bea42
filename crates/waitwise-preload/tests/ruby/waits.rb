# Ruby's threads under the interposer: the global VM lock that every Ruby
# thread takes to run, Thread::Mutex, ConditionVariable, Thread::Queue and
# SizedQueue, and their timed waits, are pthread mutexes and condition
# variables inside the interpreter (thread_pthread.c). Checks its own
# results; prints "done" last.

def check(ok, what)
  return if ok
  $stdout.puts "FAILED: #{what}"
  exit 1
end

def clock
  Process.clock_gettime(Process::CLOCK_MONOTONIC)
end

# A bounded queue from 3 producers to 4 consumers.
queue = SizedQueue.new(16)
producers = 3.times.map do |p|
  Thread.new { 1.upto(20_000) { |i| queue.push(p * 1_000_000 + i) } }
end
sums = Array.new(4, 0)
consumers = 4.times.map do |c|
  Thread.new do
    while (x = queue.pop)
      sums[c] += x
    end
  end
end
producers.each(&:join)
4.times { queue.push(nil) }
consumers.each(&:join)
want = 3.times.sum { |p| p * 1_000_000 * 20_000 + 20_000 * 20_001 / 2 }
check(sums.sum == want, "queue sum #{sums.sum}, expected #{want}")

# Threads taking turns in order through one mutex and condition variable.
mutex = Thread::Mutex.new
turn_changed = ConditionVariable.new
turn = 0
takers = 4.times.map do |me|
  Thread.new do
    500.times do
      mutex.synchronize do
        turn_changed.wait(mutex) until turn % 4 == me
        turn += 1
        turn_changed.broadcast
      end
    end
  end
end
takers.each(&:join)
check(turn == 2_000, "turns: #{turn}")

# Timed waits: a condition wait and a mutex sleep that nobody answers end
# at their deadline, not before.
t0 = clock
mutex.synchronize { turn_changed.wait(mutex, 0.1) }
waited = clock - t0
check(waited >= 0.099, "a 0.1 s condition wait ended after #{waited} s")
lonely = Thread::Mutex.new
t0 = clock
lonely.synchronize { lonely.sleep(0.1) }
waited = clock - t0
check(waited >= 0.099, "a 0.1 s mutex sleep ended after #{waited} s")

# A timed condition wait that is answered returns early.
answered = false
Thread.new do
  sleep 0.02
  mutex.synchronize do
    answered = true
    turn_changed.signal
  end
end
t0 = clock
mutex.synchronize do
  turn_changed.wait(mutex, 60) until answered
end
check(clock - t0 < 30, "an answered condition wait took #{clock - t0} s")

# CPU-bound threads share the VM lock: each gets time slices, and all
# finish.
counts = Array.new(4, 0)
spinners = 4.times.map do |i|
  Thread.new do
    deadline = clock + 0.3
    counts[i] += 1 while clock < deadline
  end
end
spinners.each(&:join)
check(counts.all?(&:positive?), "a CPU-bound thread never ran: #{counts}")

# Thread#join with a timeout on a thread that sleeps on.
sleeper = Thread.new { sleep }
check(sleeper.join(0.05).nil?, "join timed out")
sleeper.kill
sleeper.join

puts "done"
