# SPDX-License-Identifier: GPL-2.0
#
# The plot of the NVMe over Fabrics PI benchmark (tests/bench/nvme-pi-bench.sh),
# made by tests/bench/run.sh:
#   gnuplot -e "datafile='build/bench/nvme-pi-bench.dat'; \
#               outfile='build/bench/nvme-pi-bench.png'; subtitle='...'" \
#           tests/bench/nvme-pi-bench.gp
# One group of bars per fio job, one bar per column (softhca0 with PI,
# softhca0 without, rxe0 without): the median MB/s, the error bar from
# the slowest to the fastest run.

if (!exists("datafile")) datafile = 'build/bench/nvme-pi-bench.dat'
if (!exists("outfile")) outfile = 'build/bench/nvme-pi-bench.png'
if (!exists("subtitle")) subtitle = ''

set terminal pngcairo noenhanced size 1100,650 font ",10"
set output outfile
set title "nvme-rdma -> nvmet-rdma with T10-PI vs without, over softhca (rdma_rxe for reference)\n" . subtitle
set ylabel "MB/s (10^6 bytes per second), median and range of the runs"
set yrange [0:*]
set grid ytics
set datafile missing "NaN"
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set xtics nomirror
# one group per row of the data: no empty group at either side
stats datafile using 0 nooutput
set xrange [-0.6:STATS_records - 0.4]
set key outside top center horizontal

plot datafile using 2:3:4:xtic(1) title "softhca0, T10-PI (DIF type 1, CRC)", \
	'' using 5:6:7 title "softhca0, no PI", \
	'' using 8:9:10 title "rxe0, no PI"
