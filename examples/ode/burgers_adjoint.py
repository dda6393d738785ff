"""Adjoint of a method-of-lines PDE (1-D viscous Burgers, 10^5 RK4 steps)
under a memory budget: adsim's main demo, whose code lives in adsim/demo.py
so that ``python -m adsim.demo`` runs it from an installed package.

Run: ``python examples/ode/burgers_adjoint.py [--steps 100000] [--points 1000]
[--memory-limit 100MB] [--tradeoff]``.
"""
from adsim.demo import (check_against_differences, main, make_loss, rhs, rk4_step,  # noqa: F401
                        run, setup, tradeoff)

if __name__ == "__main__":
    main()
