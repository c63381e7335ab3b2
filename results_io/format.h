/* The results folder's file names and CSV headers (docs/results-format.md): one header, one
 * place, for every writer (run, replay, pcap-stats) and reader (compare, plot, analysis). */
#ifndef ROCESIM_RESULTS_FORMAT_H
#define ROCESIM_RESULTS_FORMAT_H

#define RESULTS_SUMMARY      "summary.json"
#define RESULTS_TRANSFERS    "transfers.csv"
#define RESULTS_COLLECTIVES  "collectives.csv"
#define RESULTS_QUEUES       "queues.csv"
#define RESULTS_RATES        "rates.csv"
#define RESULTS_PFC          "pfc.csv"
#define RESULTS_COUNTERS     "counters.csv"
#define RESULTS_TOPOLOGY     "topology.csv"

#define RESULTS_TRANSFERS_HEADER   "id,src,dst,bytes,prio,start_ns,end_ns,fct_ns,ideal_ns,slowdown"
#define RESULTS_COLLECTIVES_HEADER "job,op,algorithm,ranks,bytes,iteration,start_ns,end_ns,time_us,algbw_GBps,busbw_GBps"
#define RESULTS_QUEUES_HEADER      "t_ns,node,port,prio,bytes"
#define RESULTS_RATES_HEADER       "t_ns,flow,rate_gbps"
#define RESULTS_PFC_HEADER         "t_ns,node,port,prio,event,duration_ns"
#define RESULTS_COUNTERS_HEADER    "t_ns,node,port,counter,value"
#define RESULTS_TOPOLOGY_HEADER    "node,port,peer,peer_port,rate_bps,delay_ps"

#endif
