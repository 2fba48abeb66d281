# alloc + use + free time against capacity, one line per allocator, log-log;
# host (real time) and guest (QEMU TCG) side by side.
# usage: gnuplot -e "resdir='bench/results'" bench/chart.gp
if (!exists("resdir")) resdir = "bench/results"
set terminal pngcairo size 1400,600 noenhanced font ",11"
set output resdir."/alloc-large.png"
set multiplot layout 1,2 title "One buffer per capacity, 4 KiB used: alloc + use + free (median)"
set logscale xy
set key top left autotitle columnheader
set grid
set xlabel "capacity (MiB)"
set ylabel "time (ms)"
set xtics ("1" 1, "16" 16, "256" 256, "1024" 1024)
host = resdir."/alloc-large-host.dat"
guest = resdir."/alloc-large-guest.dat"
set title "host, its own kernel (Linux ".system("uname -r | tr -d '\\n'").", real time)"
plot for [c=2:6] host using 1:c with linespoints lw 2 pt 7
set title "guest, patched kernel (QEMU TCG: ratios only)"
if (system("test -s ".guest." && echo yes") eq "yes") {
	plot for [c=2:6] guest using 1:c with linespoints lw 2 pt 7
} else {
	set label 1 "no guest results" at graph 0.4, 0.5
	unset logscale
	plot [0:1] [0:1] NaN notitle
}
unset multiplot
