"""Rules about torchtune's recipe configs."""
