# Perl's ithreads under the interposer: threads::shared's lock, cond_wait,
# cond_timedwait and cond_signal/cond_broadcast are pthread mutexes and
# condition variables inside perl. Checks its own results; prints "done"
# last.
use strict;
use warnings;
use threads;
use threads::shared;
use Thread::Queue;
use Thread::Semaphore;
use Time::HiRes qw(time sleep);

sub check { my ($ok, $what) = @_; die "FAILED: $what\n" unless $ok; }

# A bounded queue from one producer to 6 consumers, each holding one of
# 2 semaphore permits while it adds to a shared sum.
my $queue = Thread::Queue->new();
$queue->limit = 64;
my $sum :shared = 0;
my $inside :shared = 0;
my $most_inside :shared = 0;
my $permits = Thread::Semaphore->new(2);
my @consumers = map {
    threads->create(sub {
        while (defined(my $x = $queue->dequeue())) {
            $permits->down;
            { lock($inside); $inside++; $most_inside = $inside if $inside > $most_inside; }
            { lock($sum); $sum += $x; }
            { lock($inside); $inside--; }
            $permits->up;
        }
    })
} 1 .. 6;
$queue->enqueue($_) for 1 .. 40_000;
$queue->end();
$_->join for @consumers;
check($sum == 40_000 * 40_001 / 2, "queue sum $sum");
check($most_inside <= 2, "semaphore let $most_inside in");

# Threads taking turns in order through one condition variable.
my $turn :shared = 0;
my $rounds = 2_000;
my @takers = map {
    my $me = $_;
    threads->create(sub {
        for (my $r = 0; $r < $rounds; $r++) {
            lock($turn);
            cond_wait($turn) until $turn % 4 == $me;
            $turn++;
            cond_broadcast($turn);
        }
    })
} 0 .. 3;
$_->join for @takers;
check($turn == 4 * $rounds, "turns $turn");

# A timed wait that is signalled before its deadline.
my $flag :shared = 0;
my $waiter = threads->create(sub {
    lock($flag);
    my $deadline = time() + 10;
    cond_timedwait($flag, $deadline) until $flag || time() >= $deadline;
    return $flag;
});
sleep(0.1);
{ lock($flag); $flag = 1; cond_signal($flag); }
check($waiter->join == 1, "signalled timed wait");

# A timed wait nobody signals ends at its deadline, not before.
{
    my $nobody :shared = 0;
    lock($nobody);
    my $start = time();
    my $deadline = $start + 0.2;
    cond_timedwait($nobody, $deadline) until time() >= $deadline;
    check(time() - $start >= 0.2, "timed wait returned early");
}
print "done\n";
