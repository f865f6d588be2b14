# SPDX-License-Identifier: GPL-2.0
#
# The plot of the MR registration benchmark (shca_mr_bench.ko, tabulated
# by tests/bench/mr-bench.sh), made by tests/bench/run.sh:
#   gnuplot -e "datafile='build/bench/mr-bench.dat'; \
#               outfile='build/bench/mr-bench.png'; subtitle='...'" \
#           tests/bench/mr-bench.gp
# One group of bars per MR operation, one bar per device: the median
# operations per second, the error bar from the slowest to the fastest
# run. "USER floor" is ib_umem_get + ib_umem_release of the same memory;
# "USER core" that with what ib_reg_user_mr and ib_dereg_mr do around
# the driver (restrack), the cost before any driver work.

if (!exists("datafile")) datafile = 'build/bench/mr-bench.dat'
if (!exists("outfile")) outfile = 'build/bench/mr-bench.png'
if (!exists("subtitle")) subtitle = ''

set terminal pngcairo noenhanced size 1000,600 font ",10"
set output outfile
set title "MR operations per second through ib_core, from the kernel\n" . subtitle
set ylabel "operations/s, median and range of the runs"
set yrange [0:*]
set grid ytics
set datafile missing "NaN"
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics nomirror
set key inside top right vertical opaque box

# The header line names the devices: "# operation softhca0(median,min,max)
# rxe0(median,min,max) ...".
names = system("sed -n 's/^# operation //p' '" . datafile . "' | head -n 1")
name(i) = substr(word(names, i), 1, strstrt(word(names, i), "(") - 1)
plot for [i=1:words(names)] datafile using 3*i-1:3*i:3*i+1:xtic(1) \
	title name(i)
