# bank: K = the 90th percentile of the row lengths, a rule of thumb: it keeps 90% of the rows whole in ELL, but the slots past a third of the rows cost more than the COO entries they save; it must lose the points.
# naive: none
def hybrid_width(lengths):
    return int(np.percentile(lengths, 90))
