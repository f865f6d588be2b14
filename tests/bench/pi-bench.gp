# SPDX-License-Identifier: GPL-2.0
#
# The plot of the T10-DIF engine benchmark (tests/bench/pi-bench.sh),
# made by tests/bench/run.sh:
#   gnuplot -e "datafile='build/bench/pi-bench.dat'; \
#               outfile='build/bench/pi-bench.png'; subtitle='...'" \
#           tests/bench/pi-bench.gp
# One group of bars per cell (the CPU limits first, then each device
# pair's cells), one bar per protection interval and message size: the
# median MB/s of data, the error bar from the slowest to the fastest run.
# Logarithmic scale: the data path without PI is an order of magnitude
# faster than the CRC.

if (!exists("datafile")) datafile = 'build/bench/pi-bench.dat'
if (!exists("outfile")) outfile = 'build/bench/pi-bench.png'
if (!exists("subtitle")) subtitle = ''

set terminal pngcairo noenhanced size 1400,750 font ",10"
set output outfile
set title "softhca T10-DIF engine: RDMA WRITE through integrity MRs vs one CPU thread on the same blocks\n" . subtitle
set ylabel "MB/s of data (PI not counted), median and range of the runs"
set logscale y
set grid ytics mytics
set datafile missing "NaN"
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics rotate by -35 nomirror
set bmargin 9
set rmargin 12
set key outside top center horizontal

plot datafile using 2:3:4:xtic(1) title "512 B blocks, 64 KiB messages", \
	'' using 5:6:7 title "512 B blocks, 1 MiB messages", \
	'' using 8:9:10 title "4 KiB blocks, 64 KiB messages", \
	'' using 11:12:13 title "4 KiB blocks, 1 MiB messages"
