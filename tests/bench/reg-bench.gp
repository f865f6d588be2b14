# SPDX-License-Identifier: GPL-2.0
#
# The plot of the userspace MR registration benchmark (shca_reg_bench,
# tabulated by tests/bench/mr-bench.sh), made by tests/bench/run.sh:
#   gnuplot -e "datafile='build/bench/reg-bench.dat'; \
#               outfile='build/bench/reg-bench.png'; subtitle='...'" \
#           tests/bench/reg-bench.gp
# Microseconds per ibv_reg_mr + ibv_dereg_mr pair against the region
# size, both logarithmic, for each device, and the floor: ib_umem_get +
# ib_umem_release of the same buffer; on the devices with on-demand
# paging also the ODP pairs (IBV_ACCESS_ON_DEMAND, dotted) and the ODP
# pairs with the whole region faulted in by ibv_advise_mr in between
# (odp-touch, dash-dotted), in the colour of their device. Points at the
# median, error bars from the fastest to the slowest run.

if (!exists("datafile")) datafile = 'build/bench/reg-bench.dat'
if (!exists("outfile")) outfile = 'build/bench/reg-bench.png'
if (!exists("subtitle")) subtitle = ''

set terminal pngcairo noenhanced size 1000,650 font ",10"
set output outfile
set title "ibv_reg_mr + ibv_dereg_mr from userspace, pinned and on demand (ODP), vs the pinning floor (ib_umem_get + ib_umem_release)\n" . subtitle
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
# max) rxe0(...) floor(...) odp:softhca0(...) odp-touch:softhca0(...)":
# a device's pinned pairs, the floor, then KIND:DEVICE for the ODP ones
# (only those with numbers; older data files end with the floor).
names = system("sed -n 's/^# size(bytes) //p' '" . datafile . "' | head -n 1")
name(i) = substr(word(names, i), 1, strstrt(word(names, i), "(") - 1)
n = words(names)
kind(i) = strstrt(name(i), ":") ? name(i)[1:strstrt(name(i), ":") - 1] : \
	(name(i) eq "floor" ? "floor" : "reg")
dev(i) = strstrt(name(i), ":") ? name(i)[strstrt(name(i), ":") + 1:] : name(i)
# the column of the pinned pairs of device d (0: none), searched from k
regcol(d, k) = k > n ? 0 : (kind(k) eq "reg" && name(k) eq d ? k : regcol(d, k + 1))
colors = "#1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #8c564b"
color(i) = kind(i) eq "floor" ? "black" : \
	word(colors, ((regcol(dev(i), 1) > 0 ? regcol(dev(i), 1) : i) - 1) % words(colors) + 1)
dash(i) = kind(i) eq "floor" ? 2 : (kind(i) eq "odp" ? 3 : (kind(i) eq "odp-touch" ? 4 : 1))
label(i) = kind(i) eq "floor" ? "floor: ib_umem_get + ib_umem_release" : \
	kind(i) eq "odp" ? "ODP ibv_reg_mr + ibv_dereg_mr on " . dev(i) : \
	kind(i) eq "odp-touch" ? "ODP reg + advise_mr(PREFETCH_WRITE) + dereg on " . dev(i) : \
	"ibv_reg_mr + ibv_dereg_mr on " . name(i)
plot for [i=1:n] datafile using 1:3*i-1:3*i:3*i+1 with yerrorlines lw 2 \
	dt dash(i) lc rgb color(i) title label(i)
