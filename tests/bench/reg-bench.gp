# SPDX-License-Identifier: GPL-2.0
#
# The plot of the userspace MR registration benchmark (shca_reg_bench,
# tabulated by tests/bench/mr-bench.sh), made by tests/bench/run.sh:
#   gnuplot -e "datafile='build/bench/reg-bench.dat'; \
#               outfile='build/bench/reg-bench.png'; subtitle='...'" \
#           tests/bench/reg-bench.gp
# Microseconds per ibv_reg_mr + ibv_dereg_mr pair against the region
# size, both logarithmic, for each device, and the floor: ib_umem_get +
# ib_umem_release of the same buffer. Points at the median, error bars
# from the fastest to the slowest run.

if (!exists("datafile")) datafile = 'build/bench/reg-bench.dat'
if (!exists("outfile")) outfile = 'build/bench/reg-bench.png'
if (!exists("subtitle")) subtitle = ''

set terminal pngcairo noenhanced size 1000,650 font ",10"
set output outfile
set title "ibv_reg_mr + ibv_dereg_mr from userspace vs the pinning floor (ib_umem_get + ib_umem_release)\n" . subtitle
set xlabel "region size"
set ylabel "microseconds per reg + dereg pair, median and range of the runs"
set logscale xy
set format y "%g"
set grid xtics ytics mytics
set datafile missing "NaN"
set xtics ("4 KiB" 4096, "64 KiB" 65536, "1 MiB" 1048576, "16 MiB" 16777216, \
	"256 MiB" 268435456, "1 GiB" 1073741824)
set xrange [2896:1518500250]
set key inside left top vertical opaque box

# The header line names the columns: "# size(bytes) softhca0(median,min,
# max) rxe0(...) floor(...)"; the last one is the floor.
names = system("sed -n 's/^# size(bytes) //p' '" . datafile . "' | head -n 1")
name(i) = substr(word(names, i), 1, strstrt(word(names, i), "(") - 1)
n = words(names)
plot for [i=1:n-1] datafile using 1:3*i-1:3*i:3*i+1 with yerrorlines lw 2 \
	title "ibv_reg_mr + ibv_dereg_mr on " . name(i), \
	'' using 1:3*n-1:3*n:3*n+1 with yerrorlines lw 2 dt 2 lc rgb "black" \
	title "floor: ib_umem_get + ib_umem_release"
