/* What Lin-Kernighan chains share (localsearch.cl's ls_lk.h on the whole tour, pils.cl
 * inside a cell): a chain never adds an edge it removed nor removes one it added. */
#ifndef TSPCL_CHAIN_H
#define TSPCL_CHAIN_H

/* Edge (x, y), either way round, is among the `count` edges (ex[i], ey[i]). */
inline int edge_in(const int x, const int y, const int *ex, const int *ey, const int count)
{
    for (int i = 0; i < count; i++)
        if ((ex[i] == x && ey[i] == y) || (ex[i] == y && ey[i] == x))
            return 1;
    return 0;
}

#endif
