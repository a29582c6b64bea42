# Tcl's event loop under the interposer. A threaded Tcl (8.6's default
# build) runs a notifier thread: the main thread's waits for timers and
# file events are pthread condition-variable waits, timed for `after`,
# woken by the notifier thread when a pipe becomes readable. Checks its
# own results; prints "done" last.

proc check {ok what} {
    if {!$ok} { puts "FAILED: $what"; exit 1 }
}

# Timers fire in deadline order, never early.
set fired {}
proc fire {ms} {
    lappend ::fired $ms [expr {[clock milliseconds] - $::t0}]
}
set t0 [clock milliseconds]
foreach ms {40 10 30 20} {
    after $ms [list fire $ms]
}
after 60 {set ::timers_done 1}
vwait timers_done
set order {}
foreach {ms at} $fired {
    lappend order $ms
    check [expr {$at >= $ms}] "timer of $ms ms fired after $at ms"
}
check [expr {$order eq {10 20 30 40}}] "timers fired in the order $order"

# A chain of 1 ms timers: 300 timed waits in a row.
set ticks 0
proc tick {} {
    if {[incr ::ticks] < 300} { after 1 tick } else { set ::ticks_done 1 }
}
after 1 tick
vwait ticks_done
check [expr {$ticks == 300}] "timer chain stopped at $ticks"

# A cancelled timer never fires.
set cancelled 0
set id [after 5 {set ::cancelled 1}]
after cancel $id
after 30 {set ::cancel_done 1}
vwait cancel_done
check [expr {$cancelled == 0}] "a cancelled timer fired"

# File events: three child processes write to pipes at once; the
# notifier thread wakes the main thread whenever one is readable.
array set lines {}
set open_pipes 0
proc readable {f n} {
    if {[gets $f line] >= 0} {
        incr ::lines($n)
        incr ::sum($n) $line
    } elseif {[eof $f]} {
        close $f
        if {[incr ::open_pipes -1] == 0} { set ::pipes_done 1 }
    }
}
foreach n {1 2 3} {
    set lines($n) 0
    set sum($n) 0
    set f [open "|seq 1 [expr {20000 * $n}]" r]
    fconfigure $f -blocking 0 -buffering line
    fileevent $f readable [list readable $f $n]
    incr open_pipes
}
after 120000 {set ::pipes_done timeout}
vwait pipes_done
check [expr {$pipes_done eq 1}] "pipes still open after 2 minutes"
foreach n {1 2 3} {
    set k [expr {20000 * $n}]
    check [expr {$lines($n) == $k}] "pipe $n gave $lines($n) lines of $k"
    check [expr {$sum($n) == $k * ($k + 1) / 2}] "pipe $n summed to $sum($n)"
}

# A timed wait on a pipe that stays silent: the timer ends it, no file
# event arrives, and it does not end early.
set silent [open "|sleep 5" r]
fconfigure $silent -blocking 0
set heard 0
fileevent $silent readable {set ::heard 1}
set t0 [clock milliseconds]
after 100 {set ::quiet_done 1}
vwait quiet_done
set waited [expr {[clock milliseconds] - $t0}]
check [expr {$heard == 0}] "a silent pipe was readable"
check [expr {$waited >= 100}] "a 100 ms wait ended after $waited ms"
fileevent $silent readable {}
close $silent

puts done
