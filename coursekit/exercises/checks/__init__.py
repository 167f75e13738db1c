"""The exercise checks, one module per topic (the notebook's lesson): each public ``check_*`` function runs a
student's solution against the library's reference on fixed and random inputs and explains what is wrong.
``coursekit.exercises`` re-exports them all."""
